import type { Check } from "../check.ts";
import { boundsDirection, boundsSeverity, countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream024: Check = {
  code: "jetstream-024",
  name: "Message Count Threshold",
  description:
    "The stream's message count crossed the bounds in its metadata `io.nats.monitor.msgs-warn` and `io.nats.monitor.msgs-critical`: warning at the first, critical at the second. Normally too many messages is the problem (consumers not keeping up, limits too loose); when msgs-critical is set below msgs-warn the bounds mean too few (a stream that should always hold data, such as a cache or a work queue fed continuously, has emptied).",
  remediation:
    "See the stream's state with `nats stream info <stream>` and its consumers with `nats consumer report <stream>`. Too many messages: make the consumers catch up or add instances, or tighten the stream's limits (`max_msgs`, `max_age`). Too few: check the publishers and anything that purges the stream. To change the bounds, edit the stream's metadata (`io.nats.monitor.msgs-warn`, `io.nats.monitor.msgs-critical`); 0 turns a bound off.",
  scope: "stream",
  entityType: "stream",
  severity: "dynamic",
  category: "saturation",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "messages", type: "BIGINT", description: "Messages stored in the stream." },
    {
      name: "msgs_warn",
      type: "BIGINT",
      description: "Warning bound from the stream's metadata io.nats.monitor.msgs-warn; NULL when not set.",
    },
    {
      name: "msgs_critical",
      type: "BIGINT",
      description:
        "Critical bound from the stream's metadata io.nats.monitor.msgs-critical; NULL when not set.",
    },
    {
      name: "direction",
      type: "VARCHAR",
      description: "above: too many messages is bad; below: too few (msgs-critical set under msgs-warn).",
    },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT epoch, stream_pk, domain, account, stream, leader, messages, msgs_warn, msgs_critical
  FROM (${monitoredStreams({
    msgs_warn: countThreshold("msgs-warn"),
    msgs_critical: countThreshold("msgs-critical"),
  })})
),
graded AS (
  SELECT *, ${boundsSeverity("messages", "msgs_warn", "msgs_critical")} AS severity,
         ${boundsDirection("msgs_warn", "msgs_critical")} AS direction
  FROM st
)
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, severity, messages, msgs_warn, msgs_critical, direction
FROM graded
WHERE severity IS NOT NULL`,
};
