import type { Check } from "../check.ts";

export const server019: Check = {
  code: "server-019",
  name: "JetStream Storage vs Configured Limit",
  description:
    "JetStream file storage in use on the server approaches the max_store configured for the server (server-017 judges what the streams' byte limits reserve of it). At the limit the server refuses new file-backed streams and writes that need more space, whatever the accounts' own limits allow. Warning from the warning percentage, critical from the critical one.",
  remediation:
    "See what uses the space with `nats server report jetstream` and `nats stream report`; purge or cap large streams (`nats stream purge`, `max_bytes`, `max_age`), move replicas to servers with room (`nats stream cluster peer-remove`), or raise `jetstream { max_file_store }` (max_store) in the server configuration once the disk has the space, and reload or restart the server.",
  scope: "server",
  entityType: "server",
  severity: "dynamic",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description: "Warning when storage in use reaches this percentage of max_store.",
    },
    {
      name: "p_crit_percent",
      default: 95,
      description: "Critical when storage in use reaches this percentage of max_store.",
    },
  ],
  detailColumns: [
    {
      name: "storage_bytes",
      type: "BIGINT",
      description: "JetStream file storage in use, bytes (JSZ storage).",
    },
    {
      name: "max_storage_bytes",
      type: "BIGINT",
      description: "JetStream file storage limit configured for the server, bytes (max_store).",
    },
    {
      name: "used_percent",
      type: "DOUBLE",
      description: "storage_bytes as a percentage of max_storage_bytes.",
    },
    { name: "warn_percent", type: "DOUBLE", description: "Warning threshold in force, percent." },
    { name: "crit_percent", type: "DOUBLE", description: "Critical threshold in force, percent." },
  ],
  sql: `
WITH usage AS (
  SELECT s.epoch, s.server_pk, s.server, s.js_storage, s.js_max_storage,
         100.0 * s.js_storage / CAST(s.js_max_storage AS DOUBLE) AS used_percent
  FROM hx.servers s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.js_max_storage > 0 AND s.js_storage IS NOT NULL
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       CASE WHEN used_percent >= p_crit_percent THEN 'critical' ELSE 'warning' END AS severity,
       CAST(js_storage AS BIGINT) AS storage_bytes,
       CAST(js_max_storage AS BIGINT) AS max_storage_bytes,
       CAST(round(used_percent, 2) AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS warn_percent,
       CAST(p_crit_percent AS DOUBLE) AS crit_percent
FROM usage
WHERE used_percent >= least(p_warn_percent, p_crit_percent)`,
};
