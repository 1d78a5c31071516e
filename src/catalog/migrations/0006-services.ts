/**
 * Micro services (ADR-32) found through `$SRV.INFO` / `$SRV.STATS` in the configured
 * application accounts: one _ident row per service instance (instances are told apart by
 * their id, which is new on every start) and one per endpoint of an instance.
 */
import { table, view, type ColumnDef } from "./ddl.ts";

const EPOCH: ColumnDef = ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."];
const OPTS_EPOCH: ColumnDef = [
  "epoch",
  "TIMESTAMPTZ NOT NULL",
  "First epoch with this configuration; it holds until the entity's next row.",
];

export const migration = {
  version: 6,
  name: "micro services and their endpoints",
  sql: [
    table(
      "hx.service_ident",
      "Every micro service instance ever seen, keyed by account, service name and instance id (a restarted instance has a new id).",
      [
        ["service_pk", "INTEGER PRIMARY KEY", "Stable integer key of the service instance."],
        ["account", "VARCHAR NOT NULL", "Account the service runs in."],
        ["name", "VARCHAR NOT NULL", "Service name; several instances share it."],
        ["instance_id", "VARCHAR NOT NULL", "Instance id the service reports."],
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the instance was first seen."],
      ],
      ["UNIQUE (account, name, instance_id)"],
    ),
    table(
      "hx.service_opts",
      "What a service instance says about itself in $SRV.INFO; a row is written when it changes.",
      [
        ["service_pk", "INTEGER NOT NULL", "Service instance (hx.service_ident)."],
        OPTS_EPOCH,
        ["version", "VARCHAR", "Version the instance reports (SemVer)."],
        ["description", "VARCHAR", "Description."],
        ["metadata", "VARCHAR", "Instance metadata as a JSON object with sorted keys; NULL when none."],
        ["started", "TIMESTAMPTZ", "When the instance started, from $SRV.STATS."],
      ],
      ["PRIMARY KEY (service_pk, epoch)"],
    ),
    table(
      "hx.service_stats",
      "Per-epoch figures of each service instance that answered, summed over its endpoints. Counters count since the instance started.",
      [
        EPOCH,
        ["service_pk", "INTEGER NOT NULL", "Service instance (hx.service_ident)."],
        ["endpoints", "INTEGER NOT NULL", "Endpoints the instance serves."],
        ["num_requests", "BIGINT", "Requests handled by all its endpoints (counter)."],
        ["num_errors", "BIGINT", "Requests that ended in an error, all endpoints (counter)."],
        [
          "answered",
          "VARCHAR[] NOT NULL",
          "Requests the instance answered this epoch ($SRV.INFO, $SRV.STATS); figures of a missing one are NULL.",
        ],
      ],
    ),
    table(
      "hx.service_endpoint_ident",
      "Every endpoint of every service instance ever seen, keyed by instance and endpoint name.",
      [
        ["endpoint_pk", "INTEGER PRIMARY KEY", "Stable integer key of the endpoint."],
        ["service_pk", "INTEGER NOT NULL", "Service instance serving it (hx.service_ident)."],
        ["name", "VARCHAR NOT NULL", "Endpoint name."],
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the endpoint was first seen."],
      ],
      ["UNIQUE (service_pk, name)"],
    ),
    table(
      "hx.service_endpoint_opts",
      "Subject, queue group and metadata of an endpoint; a row is written when they change.",
      [
        ["endpoint_pk", "INTEGER NOT NULL", "Endpoint (hx.service_endpoint_ident)."],
        OPTS_EPOCH,
        ["subject", "VARCHAR", "Subject the endpoint listens on."],
        ["queue_group", "VARCHAR", "Queue group (the default is q)."],
        ["metadata", "VARCHAR", "Endpoint metadata as a JSON object with sorted keys; NULL when none."],
      ],
      ["PRIMARY KEY (endpoint_pk, epoch)"],
    ),
    table(
      "hx.service_endpoint_stats",
      "Per-epoch figures of each endpoint from $SRV.STATS. Counters count since the instance started.",
      [
        EPOCH,
        ["endpoint_pk", "INTEGER NOT NULL", "Endpoint (hx.service_endpoint_ident)."],
        ["num_requests", "BIGINT", "Requests handled (counter)."],
        [
          "num_errors",
          "BIGINT",
          "Requests that ended in an error (counter; nats.js services count only thrown exceptions).",
        ],
        ["last_error", "VARCHAR", "The last error; NULL when none."],
        ["processing_time_ns", "BIGINT", "Total time spent handling requests, nanoseconds (counter)."],
        ["average_processing_time_ns", "BIGINT", "Average time per request, nanoseconds."],
        ["data", "VARCHAR", "Endpoint-specific statistics the service adds, as JSON; NULL when none."],
      ],
    ),
    view(
      "hx.services",
      "Per-epoch service instance figures with the account, name, instance id and what the instance says about itself.",
      `
SELECT s.epoch, i.account, i.name AS service, i.instance_id, s.service_pk,
       o.* EXCLUDE (service_pk, epoch), s.* EXCLUDE (epoch, service_pk)
FROM hx.service_stats s
JOIN hx.service_ident i ON i.service_pk = s.service_pk
ASOF LEFT JOIN hx.service_opts o ON o.service_pk = s.service_pk AND s.epoch >= o.epoch`,
      [["service", "", "Service name."]],
    ),
    view(
      "hx.service_endpoints",
      "Per-epoch endpoint figures with the service instance, endpoint name, subject and queue group.",
      `
SELECT s.epoch, si.account, si.name AS service, si.instance_id, i.name AS endpoint, s.endpoint_pk,
       i.service_pk, o.* EXCLUDE (endpoint_pk, epoch), s.* EXCLUDE (epoch, endpoint_pk)
FROM hx.service_endpoint_stats s
JOIN hx.service_endpoint_ident i ON i.endpoint_pk = s.endpoint_pk
JOIN hx.service_ident si ON si.service_pk = i.service_pk
ASOF LEFT JOIN hx.service_endpoint_opts o ON o.endpoint_pk = s.endpoint_pk AND s.epoch >= o.epoch`,
      [
        ["account", "", "Account the service runs in."],
        ["service", "", "Service name."],
        ["instance_id", "", "Id of the service instance serving the endpoint."],
        ["endpoint", "", "Endpoint name."],
      ],
    ),
  ].join("\n\n"),
};
