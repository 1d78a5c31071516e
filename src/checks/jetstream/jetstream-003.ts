import type { Check } from "../check.ts";

export const jetstream003: Check = {
  code: "jetstream-003",
  name: "Stream Message Limit",
  description:
    "The stream holds 90% or more of its max_msgs. At the limit it either drops its oldest messages (discard old), which consumers that have not read them lose, or refuses new publishes (discard new), which publishers see as errors.",
  remediation:
    "Find out whether consumers keep up (`nats consumer report <stream>`) or the stream simply grew. Raise the limit with `nats stream edit <stream> --max-msgs=N`, shorten retention with `--max-age`, or, for a work queue, add consumers so that messages are removed as they are acknowledged.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Messages as a percentage of max_msgs at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "messages", type: "BIGINT", description: "Messages stored (leader's state)." },
    { name: "max_msgs", type: "BIGINT", description: "Message limit of the stream." },
    { name: "used_percent", type: "DOUBLE", description: "messages as a percentage of max_msgs." },
    { name: "threshold_percent", type: "DOUBLE", description: "p_warn_percent in force." },
    {
      name: "discard",
      type: "VARCHAR",
      description: "What happens at the limit: old (oldest messages dropped) or new (publishes refused).",
    },
  ],
  sql: `
SELECT s.epoch, s.stream_pk AS entity_pk, checks.stream_label(s.domain, s.account, s.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       s.leader AS server, 'warning' AS severity,
       s.messages, s.max_msgs, CAST(100.0 * s.messages / s.max_msgs AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS threshold_percent, s.discard
FROM hx.streams s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.max_msgs > 0 AND s.messages * 100.0 >= p_warn_percent * s.max_msgs`,
};
