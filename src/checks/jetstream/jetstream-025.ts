import type { Check } from "../check.ts";
import { boundsDirection, boundsSeverity, countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream025: Check = {
  code: "jetstream-025",
  name: "Subject Count Threshold",
  description:
    "The number of distinct subjects stored in the stream crossed the bounds in its metadata `io.nats.monitor.subjects-warn` and `io.nats.monitor.subjects-critical`: warning at the first, critical at the second. Usually too many subjects is the problem (a publisher putting ids in subjects, a KV bucket growing without bound, more memory per stream); when subjects-critical is set below subjects-warn the bounds mean too few (a stream expected to hold one entry per device, tenant or key has lost some).",
  remediation:
    "See the subjects with `nats stream subjects <stream>` and the state with `nats stream info <stream>`. Too many: find the publisher creating new subjects, cap them with `max_msgs_per_subject` and `max_age`, or purge old subjects (`nats stream purge <stream> --subject <subject>`). Too few: check the publishers that should keep those subjects alive and anything deleting or purging them. To change the bounds, edit the stream's metadata (`io.nats.monitor.subjects-warn`, `io.nats.monitor.subjects-critical`); 0 turns a bound off.",
  scope: "stream",
  entityType: "stream",
  severity: "dynamic",
  category: "saturation",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "num_subjects", type: "BIGINT", description: "Distinct subjects stored in the stream." },
    {
      name: "subjects_warn",
      type: "BIGINT",
      description:
        "Warning bound from the stream's metadata io.nats.monitor.subjects-warn; NULL when not set.",
    },
    {
      name: "subjects_critical",
      type: "BIGINT",
      description:
        "Critical bound from the stream's metadata io.nats.monitor.subjects-critical; NULL when not set.",
    },
    {
      name: "direction",
      type: "VARCHAR",
      description:
        "above: too many subjects is bad; below: too few (subjects-critical set under subjects-warn).",
    },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, domain, account, stream, leader, num_subjects, subjects_warn, subjects_critical
  FROM (${monitoredStreams({
    subjects_warn: countThreshold("subjects-warn"),
    subjects_critical: countThreshold("subjects-critical"),
  })})
),
graded AS (
  SELECT *, ${boundsSeverity("num_subjects", "subjects_warn", "subjects_critical")} AS severity,
         ${boundsDirection("subjects_warn", "subjects_critical")} AS direction
  FROM st
)
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, severity, num_subjects, subjects_warn, subjects_critical, direction
FROM graded
WHERE severity IS NOT NULL`,
};
