import type { Check } from "../check.ts";
import { countThreshold, mirrorsWithOrigin, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream017: Check = {
  code: "jetstream-017",
  name: "Mirror Lag Critical",
  description:
    "A mirror is behind its origin stream by at least the number of messages set in the mirror's metadata `io.nats.monitor.lag-critical`. Readers of the mirror see old data, and a failover to the mirror would lose the missing messages.",
  remediation:
    "Look at the mirror with `nats stream info <mirror>` (Mirror Information: Lag, Active, Error). A lag that keeps growing means the mirror cannot keep up or cannot reach the origin: check the gateway or leafnode between them, the mirror's storage (limits, disk), and the origin's publish rate. To change the threshold, edit the mirror's metadata (`nats stream edit <mirror> --metadata io.nats.monitor.lag-critical=<messages>`); a value of 0 turns the check off for this stream.",
  scope: "stream (mirror)",
  entityType: "stream",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "mirror", type: "VARCHAR", description: "The origin stream the mirror copies." },
    { name: "mirror_lag", type: "BIGINT", description: "Messages the mirror is behind its origin." },
    {
      name: "lag_critical",
      type: "BIGINT",
      description: "Threshold from the mirror's metadata io.nats.monitor.lag-critical, messages.",
    },
    {
      name: "mirror_active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the mirror last heard from its origin.",
    },
    { name: "last_seq", type: "BIGINT", description: "Last sequence stored in the mirror." },
    {
      name: "origin_last_seq",
      type: "BIGINT",
      description: "Last sequence stored in the origin; NULL when the origin is not seen.",
    },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH mirrors AS (
  SELECT * FROM (${monitoredStreams({ lag_critical: countThreshold("lag-critical") })})
  WHERE mirror IS NOT NULL AND mirror_lag IS NOT NULL
),
m AS (${mirrorsWithOrigin("mirrors")})
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       mirror, mirror_lag, lag_critical, mirror_active_ns, last_seq, origin_last_seq
FROM m
WHERE mirror_lag >= lag_critical`,
};
