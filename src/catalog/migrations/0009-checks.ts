/**
 * Checks (architecture.md §5): stream and consumer metadata, which carries the per-asset
 * `io.nats.monitor.*` thresholds; the findings every epoch's checks produced; one row per
 * epoch the checks ran for (so a redelivered epoch does not run them twice); and the
 * health grades derived from the latest findings.
 */
import { quote, table, view } from "./ddl.ts";

const METADATA_COMMENT =
  "Metadata as a JSON object with sorted keys (2.10+); NULL when none. io.nats.monitor.* keys hold per-asset check thresholds.";

export const migration = {
  version: 9,
  name: "checks: findings, check runs, health grades, stream and consumer metadata",
  sql: [
    "ALTER TABLE hx.stream_opts ADD COLUMN metadata VARCHAR;",
    `COMMENT ON COLUMN hx.stream_opts.metadata IS ${quote(METADATA_COMMENT)};`,
    "ALTER TABLE hx.consumer_opts ADD COLUMN metadata VARCHAR;",
    `COMMENT ON COLUMN hx.consumer_opts.metadata IS ${quote(METADATA_COMMENT)};`,
    table(
      "hx.check_runs",
      "One row per epoch the operational checks ran over; written in the same transaction as the epoch's findings.",
      [
        ["epoch", "TIMESTAMPTZ PRIMARY KEY", "Epoch the checks ran over (hx.epochs)."],
        ["ran_at", "TIMESTAMPTZ NOT NULL", "When they ran."],
        ["ms", "DOUBLE NOT NULL", "Milliseconds all checks took together."],
        ["checks", "INTEGER NOT NULL", "Checks that ran."],
        ["findings", "INTEGER NOT NULL", "Findings they returned, disabled checks included."],
        [
          "failed",
          "VARCHAR[] NOT NULL",
          "Checks that failed, as code: error; they are skipped for this epoch.",
        ],
      ],
    ),
    table(
      "hx.check_findings",
      "What each operational check found in each epoch: one row per check and entity it fires for.",
      [
        ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch (hx.epochs)."],
        ["code", "VARCHAR NOT NULL", "Check code (checks.list)."],
        [
          "entity_type",
          "VARCHAR NOT NULL",
          "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …",
        ],
        [
          "entity_ref",
          "BIGINT NOT NULL",
          "Key of the entity in the _ident table of its kind (entity_pk on the wire).",
        ],
        [
          "entity_key",
          "VARCHAR",
          "Key within the entity where it has one (a replica's server); NULL otherwise.",
        ],
        ["entity_name", "VARCHAR NOT NULL", "Display name of the entity at this epoch."],
        ["server", "VARCHAR", "Monitored server the figures come from."],
        ["severity", "VARCHAR NOT NULL", "info, warning or critical."],
        [
          "disabled",
          "BOOLEAN NOT NULL",
          "The check is turned off with disabled-checks: stored, but not graded, published or notified.",
        ],
        [
          "detail",
          "VARCHAR NOT NULL",
          "The check's detail columns as a JSON object (checks.info detail_columns).",
        ],
      ],
    ),
    view(
      "hx.entity_health",
      "Health grade of each entity with findings in the latest epoch the checks ran over: red with a critical finding, amber with a warning, else green. Entities not listed have no findings and are green. Disabled checks are left out.",
      `
WITH latest AS (SELECT max(epoch) AS epoch FROM hx.check_runs)
SELECT f.epoch, f.entity_type, f.entity_ref AS entity_pk, f.entity_key, any_value(f.entity_name) AS entity_name,
       CASE WHEN bool_or(f.severity = 'critical') THEN 'red'
            WHEN bool_or(f.severity = 'warning') THEN 'amber' ELSE 'green' END AS grade,
       count(*) FILTER (WHERE f.severity = 'critical') AS critical,
       count(*) FILTER (WHERE f.severity = 'warning') AS warning,
       count(*) FILTER (WHERE f.severity = 'info') AS info,
       list(DISTINCT f.code ORDER BY f.code) AS codes
FROM hx.check_findings f JOIN latest l ON f.epoch = l.epoch
WHERE NOT f.disabled
GROUP BY f.epoch, f.entity_type, f.entity_ref, f.entity_key`,
      [
        ["epoch", "", "Latest epoch the checks ran over."],
        ["entity_type", "", "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …"],
        ["entity_pk", "", "Key of the entity in the _ident table of its kind."],
        ["entity_key", "", "Key within the entity where it has one; NULL otherwise."],
        ["entity_name", "", "Display name of the entity."],
        ["grade", "", "red (a critical finding), amber (a warning), or green (info only)."],
        ["critical", "", "Critical findings of the entity."],
        ["warning", "", "Warning findings of the entity."],
        ["info", "", "Info findings of the entity."],
        ["codes", "", "Codes of the checks that fire for it."],
      ],
    ),
    view(
      "hx.system_health",
      "Health grade of the system at the latest epoch the checks ran over: red with any critical finding, amber with a warning, else green. Disabled checks are left out.",
      `
WITH latest AS (SELECT max(epoch) AS epoch FROM hx.check_runs),
     f AS (SELECT c.* FROM hx.check_findings c JOIN latest l ON c.epoch = l.epoch WHERE NOT c.disabled)
SELECT l.epoch,
       CASE WHEN (SELECT count(*) FROM f WHERE severity = 'critical') > 0 THEN 'red'
            WHEN (SELECT count(*) FROM f WHERE severity = 'warning') > 0 THEN 'amber' ELSE 'green' END AS grade,
       (SELECT count(*) FROM f WHERE severity = 'critical') AS critical,
       (SELECT count(*) FROM f WHERE severity = 'warning') AS warning,
       (SELECT count(*) FROM f WHERE severity = 'info') AS info
FROM latest l WHERE l.epoch IS NOT NULL`,
      [
        ["epoch", "", "Latest epoch the checks ran over."],
        ["grade", "", "red, amber or green."],
        ["critical", "", "Critical findings."],
        ["warning", "", "Warning findings."],
        ["info", "", "Info findings."],
      ],
    ),
  ].join("\n\n"),
};
