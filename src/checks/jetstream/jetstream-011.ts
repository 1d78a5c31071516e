import type { Check } from "../check.ts";

export const jetstream011: Check = {
  code: "jetstream-011",
  name: "Stream Consumer Limit",
  description:
    "The stream has 90% or more of the consumers its max_consumers allows. Once the limit is reached, creating a consumer on it fails, which breaks applications that create consumers on start-up or per request.",
  remediation:
    "List the consumers (`nats consumer ls <stream>`) and look for abandoned durables or ephemerals left behind by clients; remove the unused ones with `nats consumer rm <stream> <consumer>` and give ephemerals an inactive threshold. If the consumers are all needed, raise the limit with `nats stream edit <stream> --max-consumers=N`.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Consumers as a percentage of max_consumers at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "consumers", type: "INTEGER", description: "Consumers of the stream (leader's state)." },
    { name: "max_consumers", type: "BIGINT", description: "Consumer limit of the stream." },
    { name: "used_percent", type: "DOUBLE", description: "consumers as a percentage of max_consumers." },
    { name: "threshold_percent", type: "DOUBLE", description: "p_warn_percent in force." },
  ],
  sql: `
SELECT s.epoch, s.stream_pk AS entity_pk, checks.stream_label(s.domain, s.account, s.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       s.leader AS server, 'warning' AS severity,
       s.consumer_count AS consumers, s.max_consumers,
       CAST(100.0 * s.consumer_count / s.max_consumers AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS threshold_percent
FROM hx.streams s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.max_consumers > 0
  AND s.consumer_count * 100.0 >= p_warn_percent * s.max_consumers`,
};
