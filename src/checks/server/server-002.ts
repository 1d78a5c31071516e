import type { Check } from "../check.ts";
import { clusterPeersCte } from "../cluster/cluster-peers-sql.ts";

/**
 * The majority is the version most servers of the cluster run in the epoch; a tie goes to the
 * newest of the tied versions (the likely upgrade target), so the servers left behind fire.
 * Every server the epoch expected counts by its last VARZ answer of the past hour
 * (clusterPeersCte): a server that missed the scrape does not turn a majority into a tie and
 * report the servers of the old majority. A server is judged only in an epoch it answered VARZ.
 * Servers outside any cluster have no peers to compare with and are left out.
 */
export const server002: Check = {
  code: "server-002",
  name: "Server Version Mismatch",
  description:
    "The server runs a different nats-server version than most servers of its cluster. Mixed versions are expected for the minutes of a rolling upgrade; left in place they mean an upgrade stopped half way or a server was replaced with another build. Servers of one cluster replicate JetStream assets and exchange route protocol with each other, and features, limits and bug fixes then differ from server to server.",
  remediation:
    "Compare versions with `nats server list` (or `nats server report jetstream`). Finish the rolling upgrade (or roll back) so that every server of the cluster runs the same release: restart one server at a time with the new binary, waiting until `nats server report jetstream` shows every peer current again before the next. Upgrade across at most one minor release at a time and read the release notes for the versions in between.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster the server belongs to." },
    { name: "version", type: "VARCHAR", description: "nats-server version this server runs." },
    {
      name: "majority_version",
      type: "VARCHAR",
      description: "Version most servers of the cluster run in this epoch (ties: the newest).",
    },
    {
      name: "majority_servers",
      type: "BIGINT",
      description:
        "Servers of the cluster running the majority version (each by its last answer of the past hour).",
    },
    {
      name: "cluster_servers",
      type: "BIGINT",
      description: "Servers of the cluster with their version (each by its last answer of the past hour).",
    },
  ],
  sql: `
WITH ${clusterPeersCte("peers")}, s AS (
  SELECT epoch, answered_epoch, server_pk, server, cluster, version
  FROM peers
  WHERE cluster IS NOT NULL AND version IS NOT NULL
),
counts AS (
  SELECT epoch, cluster, version, count(*) AS n,
         list_transform(string_split(regexp_extract(version, '^v?([0-9]+\\.[0-9]+\\.[0-9]+)', 1), '.'),
                        x -> TRY_CAST(x AS INTEGER)) AS release
  FROM s GROUP BY epoch, cluster, version
),
majority AS (
  SELECT epoch, cluster, arg_max(version, (n, release, version)) AS version, max(n) AS n, sum(n) AS total
  FROM counts GROUP BY epoch, cluster
)
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key,
       s.server, 'warning' AS severity, s.cluster, s.version,
       m.version AS majority_version, CAST(m.n AS BIGINT) AS majority_servers,
       CAST(m.total AS BIGINT) AS cluster_servers
FROM s JOIN majority m ON m.epoch = s.epoch AND m.cluster = s.cluster
WHERE s.answered_epoch = s.epoch AND s.version <> m.version`,
};
