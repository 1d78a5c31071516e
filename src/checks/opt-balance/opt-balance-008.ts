import type { Check } from "../check.ts";

/**
 * Storage use of each JetStream server as a percentage of its own max_file_store (JSZ
 * `storage` over the configured `max_storage`), at the latest epoch of the window holding
 * it; the spread is between the fullest and the emptiest JetStream server of its cluster at
 * that epoch. A cluster of one has no spread.
 */
export const optBalance008: Check = {
  code: "opt-balance-008",
  name: "JetStream Storage Saturation with Skew",
  description:
    'The server\'s JetStream file storage is nearly full while other servers of its cluster still have plenty of room: the spread between the fullest and the emptiest server is wide. The cluster as a whole is not out of space, but this server is about to refuse writes for every stream it holds a replica of ("insufficient resources"), and new streams cannot be placed on it. Rebalancing fixes it without adding disk.',
  remediation:
    "See storage per server with `nats server report jetstream` and the large streams on the full server with `nats stream report`. Move replicas to the emptier servers with `nats stream cluster peer-remove <stream> <server>`, bound the largest streams with `max_bytes` or `max_age` (`nats stream edit <stream> --max-bytes …`), purge what is no longer needed (`nats stream purge`), and if the server's max_file_store is smaller than its peers', raise it in its `jetstream { max_file_store: … }` configuration.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_saturation_pct",
      default: 90,
      description: "Fires when the server uses at least this percentage of its JetStream storage.",
    },
    {
      name: "p_skew_pp",
      default: 30,
      description:
        "…and the cluster's fullest and emptiest servers are more than this many percentage points apart.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "storage_bytes", type: "BIGINT", description: "JetStream file storage the server uses, bytes." },
    {
      name: "max_storage_bytes",
      type: "BIGINT",
      description: "The server's JetStream storage limit, bytes.",
    },
    { name: "used_pct", type: "DOUBLE", description: "storage_bytes as a percentage of max_storage_bytes." },
    {
      name: "cluster_min_pct",
      type: "DOUBLE",
      description: "Storage use of the emptiest JetStream server of the cluster, percent.",
    },
    {
      name: "spread_pp",
      type: "DOUBLE",
      description:
        "Storage use of the fullest server of the cluster minus the emptiest's, percentage points.",
    },
  ],
  sql: `
WITH used AS (
  SELECT epoch, server_pk, server, cluster, js_storage, js_max_storage,
         100.0 * js_storage / js_max_storage AS pct
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND cluster IS NOT NULL AND jetstream
    AND js_storage IS NOT NULL AND js_max_storage > 0
), spread AS (
  SELECT *, min(pct) OVER (PARTITION BY epoch, cluster) AS cluster_min,
         max(pct) OVER (PARTITION BY epoch, cluster) AS cluster_max
  FROM used
  QUALIFY epoch = max(epoch) OVER (PARTITION BY server_pk)
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       'warning' AS severity, cluster, js_storage AS storage_bytes, js_max_storage AS max_storage_bytes,
       CAST(pct AS DOUBLE) AS used_pct, CAST(cluster_min AS DOUBLE) AS cluster_min_pct,
       CAST(cluster_max - cluster_min AS DOUBLE) AS spread_pp
FROM spread
WHERE pct >= p_saturation_pct AND cluster_max - cluster_min > p_skew_pp`,
};
