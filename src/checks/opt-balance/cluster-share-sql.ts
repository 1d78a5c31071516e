/**
 * The shared shape of the balance checks that compare one figure of hx.servers with its
 * cluster's average (opt-balance-002, -004, -005): each server at its latest epoch in the
 * window, the average over the servers of its cluster answering that same epoch (so a skew
 * that cleared before the window's end is not reported), firing above `p_multiplier` times
 * the average.
 */
export interface ClusterShare {
  /** The hx.servers column compared. */
  readonly figure: string;
  /** Detail column names of the figure and of the cluster's average. */
  readonly as: string;
  readonly avgAs: string;
  /** Only JetStream servers count (figures of JetStream). */
  readonly jetstream: boolean;
  /** SQL: the fewest servers a cluster needs to be judged. */
  readonly minServers: string;
  /** SQL: the figure a server needs at least to be reported. */
  readonly minFigure: string;
}

export function clusterShareSql(share: ClusterShare): string {
  const { figure } = share;
  return `
WITH shares AS (
  SELECT epoch, server_pk, server, cluster, ${figure} AS figure,
         avg(${figure}) OVER (PARTITION BY epoch, cluster) AS cluster_avg,
         count(*) OVER (PARTITION BY epoch, cluster) AS members
  FROM hx.servers
  WHERE epoch BETWEEN ep_from AND ep_to AND cluster IS NOT NULL${share.jetstream ? " AND jetstream" : ""}
    AND ${figure} IS NOT NULL
  QUALIFY epoch = max(epoch) OVER (PARTITION BY server_pk)
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key, server,
       'info' AS severity, cluster, figure AS ${share.as}, CAST(cluster_avg AS DOUBLE) AS ${share.avgAs},
       CAST(figure / cluster_avg AS DOUBLE) AS ratio, CAST(members AS INTEGER) AS cluster_servers
FROM shares
WHERE members >= ${share.minServers} AND figure >= ${share.minFigure} AND figure > p_multiplier * cluster_avg`;
}
