import type { Check } from "../check.ts";
import { MIRROR_STREAMS, mirrorsWithOrigin } from "./stream-monitor-sql.ts";

export const jetstream015: Check = {
  code: "jetstream-015",
  name: "Mirror Last Seen Staleness",
  description:
    "A mirror reports zero lag, but it has not heard from its origin stream for longer than the threshold while the origin has stored messages since then. The lag figure is only updated when the mirror hears from the origin, so a stalled mirror keeps claiming to be in sync while it falls further behind: readers of the mirror get stale data and a failover to it would lose messages.",
  remediation:
    "Check the mirror with `nats stream info <mirror>` (Mirror Information: Active, Lag, Error) and the origin with `nats stream info <origin>`. Look for a broken path between them: a gateway or leafnode down, a changed origin domain or API prefix (`mirror.external.api`), or permissions on `$JS.API` subjects for cross-account mirrors. Once the path is back the mirror resumes; if it stays stuck, a mirror leader step-down (`nats stream cluster step-down <mirror>`) restarts its internal consumer.",
  scope: "stream (mirror)",
  entityType: "stream",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [
    {
      name: "p_stale_minutes",
      default: 5,
      description: "Fires when the mirror has not heard from its origin for more than this many minutes.",
    },
  ],
  detailColumns: [
    { name: "mirror", type: "VARCHAR", description: "The origin stream the mirror copies." },
    { name: "mirror_lag", type: "BIGINT", description: "Lag the mirror reports, messages (0)." },
    {
      name: "mirror_active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the mirror last heard from its origin.",
    },
    { name: "last_seq", type: "BIGINT", description: "Last sequence stored in the mirror." },
    { name: "origin_last_seq", type: "BIGINT", description: "Last sequence stored in the origin." },
    {
      name: "origin_last_ts",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of the origin's last message, after the mirror last heard from it.",
    },
  ],
  sql: `
WITH mirrors AS (
  SELECT * FROM (${MIRROR_STREAMS})
  WHERE mirror IS NOT NULL AND mirror_lag = 0 AND mirror_active_ns > p_stale_minutes * 60e9
),
m AS (${mirrorsWithOrigin("mirrors")})
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'warning' AS severity,
       mirror, mirror_lag, mirror_active_ns, last_seq, origin_last_seq, origin_last_ts
FROM m
-- The origin stored messages after the mirror's last contact, and holds sequences the
-- mirror does not: both, so that a clock skew between servers alone cannot fire it.
WHERE origin_last_ts > epoch - to_microseconds(CAST(mirror_active_ns / 1000 AS BIGINT))
  AND origin_last_seq > last_seq`,
};
