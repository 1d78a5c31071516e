/**
 * The views of migration 0005 (replication), in their own module to keep files short:
 * hx.stream_replicas, hx.consumer_replicas, hx.raft_groups, hx.meta, and hx.kv_buckets and
 * hx.object_stores, which are streams named KV_<bucket> and OBJ_<bucket> seen through
 * hx.streams. Part of a released migration: change only by adding a new one.
 */
import { view, type ColumnDef } from "./ddl.ts";

const NAMES: ColumnDef[] = [
  ["domain", "", "JetStream domain; empty when none."],
  ["account", "", "Account of the stream."],
  ["stream", "", "Stream name."],
  ["server", "", "Name of the server holding the replica."],
];

/** KV buckets and object stores are streams: their columns, named as the client tools name them. */
function bucketView(
  name: string,
  prefix: string,
  what: string,
  extra: string,
  comments: ColumnDef[],
  accountName: ColumnDef[] = [],
): string {
  return view(
    name,
    `Per-epoch ${what} (streams named ${prefix}<bucket>), from hx.streams: the leader's figures and the configuration in force.`,
    `
SELECT epoch, domain, account,${accountName.length > 0 ? " account_name," : ""} substr(stream, ${prefix.length + 1}) AS bucket, stream, stream_pk, leader, cluster,
       replicas, storage, max_age_ns AS ttl_ns, ${extra} bytes, max_bytes, sealed, created,
       replicas_offline, replicas_lagging
FROM hx.streams
WHERE starts_with(stream, '${prefix}') AND length(stream) > ${prefix.length}`,
    [
      ["epoch", "", "Epoch of these figures (hx.epochs)."],
      ["domain", "", "JetStream domain; empty when none."],
      ["account", "", "Account the bucket lives in."],
      ...accountName,
      ["bucket", "", `Bucket name: the stream name without ${prefix}.`],
      ["stream", "", "Name of the stream holding the bucket."],
      ["stream_pk", "", "Stream (hx.stream_ident)."],
      ["leader", "", "Server the figures come from (the stream leader)."],
      ["cluster", "", "Cluster of the stream's raft group."],
      ["replicas", "", "Number of replicas."],
      ["storage", "", "Storage: file or memory."],
      ["ttl_ns", "", "Time to live of an entry (the stream's max_age), nanoseconds; 0 for none."],
      ...comments,
      ["bytes", "", "Bytes stored."],
      ["max_bytes", "", "Size limit in bytes; -1 unlimited."],
      ["sealed", "", "Whether the bucket is sealed (read-only)."],
      ["created", "", "When the bucket's stream was created."],
      ["replicas_offline", "", "Peers the leader reports offline."],
      ["replicas_lagging", "", "Peers the leader reports online but not current or behind."],
    ],
  );
}

/**
 * hx.raft_groups; with `naming` (migration 35), the account's name for people beside its id,
 * from the join it names.
 */
export function raftGroupsView(naming?: { column: string; join: string; comments: ColumnDef[] }): string {
  return view(
    "hx.raft_groups",
    "Per-epoch raft groups with what they replicate, leader name and membership in force.",
    `
SELECT s.epoch, i.domain, i.name AS raft_group, i.kind, i.account,${naming ? ` ${naming.column},` : ""} st.name AS stream, c.name AS consumer,
       l.name AS leader, s.raft_group_pk, o.* EXCLUDE (raft_group_pk, epoch),
       s.* EXCLUDE (epoch, raft_group_pk, leader_server_pk)
FROM hx.raft_group_stats s
JOIN hx.raft_group_ident i ON i.raft_group_pk = s.raft_group_pk
LEFT JOIN hx.stream_ident st ON st.stream_pk = i.stream_pk
LEFT JOIN hx.consumer_ident c ON c.consumer_pk = i.consumer_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.raft_group_opts o ON o.raft_group_pk = s.raft_group_pk AND s.epoch >= o.epoch${naming ? `\n${naming.join}` : ""}`,
    [
      ...(naming?.comments ?? []),
      ["raft_group", "", "Raft group name."],
      ["stream", "", "Stream of the group, or of its consumer."],
      ["consumer", "", "Consumer of a consumer group."],
      ["leader", "", "Name of the group leader; NULL when no answering server leads it."],
    ],
  );
}

/** hx.kv_buckets; with `accountName` (migration 35), the account's name beside its id. */
export function kvBucketsView(accountName: ColumnDef[] = []): string {
  return bucketView(
    "hx.kv_buckets",
    "KV_",
    "KV buckets",
    "max_msgs_per_subject AS history, messages AS values_stored,",
    [
      ["history", "", "Values kept per key (the stream's max_msgs_per_subject)."],
      [
        "values_stored",
        "",
        "Values stored, every key's history and delete markers included (the stream's messages).",
      ],
    ],
    accountName,
  );
}

/** hx.object_stores; with `accountName` (migration 35), the account's name beside its id. */
export function objectStoresView(accountName: ColumnDef[] = []): string {
  return bucketView(
    "hx.object_stores",
    "OBJ_",
    "object stores",
    "messages,",
    [["messages", "", "Messages stored: object chunks plus one metadata message per object."]],
    accountName,
  );
}

export const REPLICATION_VIEWS: readonly string[] = [
  view(
    "hx.stream_replicas",
    "Per-epoch stream replicas with stream and server names: each server's own copy against the leader's (hx.stream_replica_stats + _ident + hx.stream_stats).",
    `
SELECT s.epoch, si.domain, si.account, si.name AS stream, sv.name AS server, s.stream_replica_pk, i.stream_pk,
       i.server_pk, s.* EXCLUDE (epoch, stream_replica_pk), ls.last_seq - s.last_seq AS behind_leader_seq
FROM hx.stream_replica_stats s
JOIN hx.stream_replica_ident i ON i.stream_replica_pk = s.stream_replica_pk
JOIN hx.stream_ident si ON si.stream_pk = i.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
LEFT JOIN hx.stream_stats ls ON ls.stream_pk = i.stream_pk AND ls.epoch = s.epoch`,
    [
      ...NAMES,
      [
        "behind_leader_seq",
        "",
        "Leader's last_seq minus this replica's own last_seq: messages the replica lacks; 0 when in sync, NULL when either is unknown.",
      ],
    ],
  ),
  view(
    "hx.consumer_replicas",
    "Per-epoch consumer replicas with stream, consumer and server names: each server's own copy against the consumer leader's.",
    `
SELECT s.epoch, si.domain, si.account, si.name AS stream, ci.name AS consumer, sv.name AS server,
       s.consumer_replica_pk, i.consumer_pk, i.server_pk, s.* EXCLUDE (epoch, consumer_replica_pk),
       lc.ack_floor_stream_seq - s.ack_floor_stream_seq AS behind_leader_ack_floor
FROM hx.consumer_replica_stats s
JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = s.consumer_replica_pk
JOIN hx.consumer_ident ci ON ci.consumer_pk = i.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
LEFT JOIN hx.consumer_stats lc ON lc.consumer_pk = i.consumer_pk AND lc.epoch = s.epoch`,
    [
      ...NAMES,
      ["consumer", "", "Consumer name."],
      [
        "behind_leader_ack_floor",
        "",
        "Leader's ack floor (stream sequence) minus this replica's own; 0 when in sync.",
      ],
    ],
  ),
  raftGroupsView(),
  view(
    "hx.meta",
    "Per-epoch JetStream meta group, one row per domain: the leader, whether all servers agree on it, and whether quorum holds.",
    `
WITH views AS (
  SELECT m.*, sv.name AS server,
         min(CASE WHEN m.is_leader THEN sv.name END) OVER w AS claimed,
         mode(m.leader) OVER w AS named,
         list(sv.name) OVER w AS reporting
  FROM hx.meta_stats m JOIN hx.server_ident sv ON sv.server_pk = m.server_pk
  WINDOW w AS (PARTITION BY m.epoch, m.meta_pk)
), judged AS (
  -- The leader: the server claiming it, or else the one the others name when it did not
  -- answer (its own view is missing, not contradicting them).
  SELECT *, coalesce(claimed, CASE WHEN NOT list_contains(reporting, named) THEN named END) AS lead
  FROM views
), agg AS (
  SELECT epoch, meta_pk, any_value(lead) AS leader, any_value(claimed) IS NOT NULL AS leader_reporting,
         count(*) FILTER (WHERE leader IS DISTINCT FROM lead) = 0 AND any_value(lead) IS NOT NULL
           AS leader_agreed,
         list(DISTINCT leader ORDER BY leader) FILTER (WHERE leader IS NOT NULL) AS leaders_seen,
         coalesce(list(server ORDER BY server) FILTER (WHERE leader IS DISTINCT FROM lead), [])
           AS servers_disagreeing,
         count(*) FILTER (WHERE is_leader) AS leaders_claiming,
         count(*) AS servers_reporting,
         coalesce(max(cluster_size) FILTER (WHERE is_leader), max(cluster_size)) AS cluster_size,
         max(peers_offline) FILTER (WHERE is_leader) AS peers_offline,
         max(peers_lagging) FILTER (WHERE is_leader) AS peers_lagging,
         CASE WHEN any_value(claimed) IS NOT NULL THEN bool_and(quorum_ok) FILTER (WHERE is_leader)
              WHEN any_value(lead) IS NULL THEN false END AS quorum_ok
  FROM judged GROUP BY epoch, meta_pk
)
SELECT a.epoch, i.domain, a.meta_pk, a.leader, a.leader_reporting, a.leader_agreed, a.leaders_seen,
       a.servers_disagreeing, a.leaders_claiming, a.servers_reporting, a.cluster_size,
       a.cluster_size // 2 + 1 AS quorum, a.peers_offline, a.peers_lagging, a.quorum_ok, o.members
FROM agg a
JOIN hx.meta_ident i ON i.meta_pk = a.meta_pk
ASOF LEFT JOIN hx.meta_opts o ON o.meta_pk = a.meta_pk AND a.epoch >= o.epoch`,
    [
      [
        "leader",
        "",
        "Meta leader: the server claiming it, or the one the others name when it did not answer; NULL when there is none (no quorum).",
      ],
      [
        "leader_reporting",
        "",
        "Whether the leader answered: the offline and lagging counts and quorum_ok come from its reply.",
      ],
      ["leader_agreed", "", "Whether there is a leader and every reporting server names it."],
      ["leaders_seen", "", "Distinct leaders named by the reporting servers."],
      [
        "servers_disagreeing",
        "",
        "Servers naming another leader than the leader column, or none; when there is no leader, those still naming one.",
      ],
      ["leaders_claiming", "", "Servers saying they are the meta leader; more than one during an election."],
      ["servers_reporting", "", "Servers whose JSZ reported the meta group this epoch."],
      ["cluster_size", "", "Meta group size, as the leader reports it (else the largest reported)."],
      ["quorum", "", "Servers needed for quorum: floor(cluster_size / 2) + 1."],
      ["peers_offline", "", "Peers the leader reports offline; NULL when the leader did not answer."],
      ["peers_lagging", "", "Peers the leader reports online but not current or behind."],
      [
        "quorum_ok",
        "",
        "Whether the leader answered and cluster_size - peers_offline reaches quorum; false without a leader; NULL when the leader did not answer (unknown). 2.9 healthz can say ok without quorum.",
      ],
    ],
  ),
  kvBucketsView(),
  objectStoresView(),
];
