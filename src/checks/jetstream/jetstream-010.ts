import type { Check } from "../check.ts";

export const jetstream010: Check = {
  code: "jetstream-010",
  name: "Stream Byte Limit",
  description:
    "The stream holds 90% or more of its max_bytes. At the limit it either drops its oldest messages (discard old), which consumers that have not read them lose, or refuses new publishes (discard new), which publishers see as errors.",
  remediation:
    "Check whether consumers keep up (`nats consumer report <stream>`) or the data simply grew. Raise the limit with `nats stream edit <stream> --max-bytes=N` (within the account's and servers' JetStream storage), shorten retention with `--max-age`, cap subjects with `--max-msgs-per-subject`, or enable compression (2.10+, `--compression=s2`).",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Bytes stored as a percentage of max_bytes at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "bytes", type: "BIGINT", description: "Bytes stored (leader's state)." },
    { name: "max_bytes", type: "BIGINT", description: "Byte limit of the stream." },
    { name: "used_percent", type: "DOUBLE", description: "bytes as a percentage of max_bytes." },
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
       s.bytes, s.max_bytes, CAST(100.0 * s.bytes / s.max_bytes AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS threshold_percent, s.discard
FROM hx.streams s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.max_bytes > 0 AND s.bytes * 100.0 >= p_warn_percent * s.max_bytes`,
};
