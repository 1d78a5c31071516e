import type { Check } from "../check.ts";

export const server017: Check = {
  code: "server-017",
  name: "JetStream Storage Pressure",
  description:
    "JetStream file storage in use on the server is close to the storage the accounts with JetStream limits have reserved on it. Streams that need more space will soon be refused ('insufficient storage resources') or, with discard old, lose their oldest messages.",
  remediation:
    "See which accounts and streams use the space: `nats server report jetstream` and, per account, `nats account info`. Purge or shrink streams (`nats stream purge`, lower `max_bytes` / `max_age`), or give the accounts more JetStream storage (account `jetstream` limits in the server configuration, or `nsc edit account --js-disk-storage` with an operator) and add disk if needed.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Fires when storage in use reaches this percentage of the reserved storage.",
    },
  ],
  detailColumns: [
    {
      name: "storage_bytes",
      type: "BIGINT",
      description: "JetStream file storage in use, bytes (JSZ storage).",
    },
    {
      name: "reserved_storage_bytes",
      type: "BIGINT",
      description: "JetStream storage reserved by accounts on this server, bytes (JSZ reserved_storage).",
    },
    {
      name: "used_percent",
      type: "DOUBLE",
      description: "storage_bytes as a percentage of reserved_storage_bytes.",
    },
    { name: "warn_percent", type: "DOUBLE", description: "Threshold in force, percent." },
  ],
  // Nothing reserved (0) or unlimited (2^64-1, read as anything from 2^63) leaves no limit to approach.
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'warning' AS severity,
       CAST(s.js_storage AS BIGINT) AS storage_bytes,
       CAST(s.js_reserved_storage AS BIGINT) AS reserved_storage_bytes,
       CAST(round(100.0 * s.js_storage / CAST(s.js_reserved_storage AS DOUBLE), 2) AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS warn_percent
FROM hx.server_stats s
JOIN hx.server_ident i ON i.server_pk = s.server_pk
WHERE s.epoch BETWEEN ep_from AND ep_to
  AND s.js_reserved_storage > 0 AND s.js_reserved_storage < CAST(9223372036854775808 AS UBIGINT)
  AND CAST(s.js_storage AS DOUBLE) * 100 >= CAST(p_warn_percent AS DOUBLE) * CAST(s.js_reserved_storage AS DOUBLE)`,
};
