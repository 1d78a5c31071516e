import type { Check } from "../check.ts";
import { durationThreshold, mirrorsWithOrigin, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream018: Check = {
  code: "jetstream-018",
  name: "Mirror Seen Critical",
  description:
    "A mirror has not heard from its origin stream for at least the duration set in the mirror's metadata `io.nats.monitor.seen-critical` (a Go duration such as 5m). A mirror that has lost contact with its origin stops copying, and its lag figure is no longer updated.",
  remediation:
    "Look at the mirror with `nats stream info <mirror>` (Mirror Information: Active, Error) and make sure the origin is reachable from the mirror's cluster: the gateway or leafnode between them, the origin's domain or API prefix in the mirror's configuration, and cross-account imports of `$JS.API` subjects. To change the threshold, edit the mirror's metadata (`nats stream edit <mirror> --metadata io.nats.monitor.seen-critical=10m`); 0 turns the check off.",
  scope: "stream (mirror)",
  entityType: "stream",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "mirror", type: "VARCHAR", description: "The origin stream the mirror copies." },
    {
      name: "mirror_active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the mirror last heard from its origin.",
    },
    {
      name: "seen_critical",
      type: "VARCHAR",
      description: "Threshold from the mirror's metadata io.nats.monitor.seen-critical, as written.",
    },
    { name: "seen_critical_ns", type: "BIGINT", description: "That threshold in nanoseconds." },
    { name: "mirror_lag", type: "BIGINT", description: "Lag the mirror last reported, messages." },
    {
      name: "origin_last_ts",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the origin's last message; NULL when the origin is not seen.",
    },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH mirrors AS (
  SELECT * FROM (${monitoredStreams({
    seen_critical: "checks.monitor_text(metadata, 'seen-critical')",
    seen_critical_ns: durationThreshold("seen-critical"),
  })})
  WHERE mirror IS NOT NULL AND mirror_active_ns IS NOT NULL
),
m AS (${mirrorsWithOrigin("mirrors")})
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       mirror, mirror_active_ns, seen_critical, seen_critical_ns, mirror_lag, origin_last_ts
FROM m
WHERE mirror_active_ns >= seen_critical_ns`,
};
