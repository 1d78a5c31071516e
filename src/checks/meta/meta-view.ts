/**
 * The JetStream meta group per epoch as the meta checks judge it, shared by their macros
 * (each macro inlines it; DuckDB table macros cannot call a CTE of another).
 *
 * Why not hx.meta: when several servers claim the leadership (an election, or a partitioned
 * server still believing it leads), hx.meta takes the first claimant by name. Here the leader
 * is the claimant most reporting servers name, so a single dissenting server cannot make its
 * stale view (offline peers, cluster size) the one the checks read. When no reporting server
 * claims it, the leader is the one most servers name, provided it did not answer (its own view
 * is missing, not contradicting them). The scan is bounded to [lo, hi] before anything else.
 *
 * The group's name must not follow its leader: nats-server reports its own cluster as the
 * meta group's name (2.9.10 jetstream_cluster.go clusterInfo), so a group spanning east and
 * west was "east" or "west" as the leader moved, and its findings changed entity name. It is
 * the JetStream domain when there is one, else the clusters of its members as its leaders
 * last listed them (hx.meta_opts; "east+west", sorted, when they span several), else the
 * clusters of the servers reporting it, else 'meta'.
 *
 * Columns of `meta_groups`: epoch, meta_pk, domain, group_name, leader, leader_reporting,
 * claimants, leaders_seen, servers_reporting, cluster_size (the leader's, else the largest
 * reported), quorum, peers_offline, peer_names / peer_offline / peer_current /
 * peer_active_ns / peer_lag (the leader's view of each peer), pending (the leader's meta API
 * queue), leader_server_pk.
 */
export function metaGroupsCte(lo: string, hi: string): string {
  return `meta_rows AS (
  SELECT m.*, sv.name AS server,
         -- On a claimant's row: how many reporting servers name it as the leader.
         count(*) OVER (PARTITION BY m.epoch, m.meta_pk, m.leader) AS votes
  FROM hx.meta_stats m JOIN hx.server_ident sv ON sv.server_pk = m.server_pk
  WHERE m.epoch BETWEEN ${lo} AND ${hi}
), meta_votes AS (
  SELECT epoch, meta_pk,
         first(server ORDER BY votes DESC, server) FILTER (WHERE is_leader) AS claimed,
         first(leader ORDER BY votes DESC, leader) FILTER (WHERE leader IS NOT NULL) AS named,
         list(server ORDER BY server) AS reporting,
         coalesce(list(server ORDER BY server) FILTER (WHERE is_leader), []) AS claimants,
         coalesce(list(DISTINCT leader ORDER BY leader) FILTER (WHERE leader IS NOT NULL), []) AS leaders_seen,
         count(*) AS servers_reporting,
         max(cluster_size) AS largest_size
  FROM meta_rows GROUP BY epoch, meta_pk
), meta_member_clusters AS (
  SELECT m.meta_pk, m.epoch, array_to_string(list_sort(list(DISTINCT sv.cluster)), '+') AS clusters
  FROM (SELECT meta_pk, epoch, unnest(members) AS member FROM hx.meta_opts WHERE epoch <= ${hi}) m
  JOIN hx.server_ident sv ON sv.name = m.member
  WHERE sv.cluster IS NOT NULL
  GROUP BY m.meta_pk, m.epoch
), meta_reporting_clusters AS (
  SELECT epoch, meta_pk, array_to_string(list_sort(list(DISTINCT cluster)), '+') AS clusters
  FROM meta_rows WHERE cluster IS NOT NULL GROUP BY epoch, meta_pk
), meta_groups AS (
  SELECT v.epoch, v.meta_pk, i.domain,
         coalesce(nullif(i.domain, ''), mc.clusters, rc.clusters, 'meta') AS group_name,
         coalesce(v.claimed, CASE WHEN NOT list_contains(v.reporting, v.named) THEN v.named END) AS leader,
         v.claimed IS NOT NULL AS leader_reporting,
         v.claimants, v.leaders_seen, v.servers_reporting,
         coalesce(l.cluster_size, v.largest_size) AS cluster_size,
         coalesce(l.cluster_size, v.largest_size) // 2 + 1 AS quorum,
         l.peers_offline, l.peer_names, l.peer_offline, l.peer_current, l.peer_active_ns, l.peer_lag,
         l.pending, l.server_pk AS leader_server_pk
  FROM meta_votes v
  JOIN hx.meta_ident i ON i.meta_pk = v.meta_pk
  LEFT JOIN meta_rows l ON l.epoch = v.epoch AND l.meta_pk = v.meta_pk AND l.server = v.claimed
  LEFT JOIN meta_reporting_clusters rc ON rc.epoch = v.epoch AND rc.meta_pk = v.meta_pk
  ASOF LEFT JOIN meta_member_clusters mc ON mc.meta_pk = v.meta_pk AND v.epoch >= mc.epoch
)`;
}
