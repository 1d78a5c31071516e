/**
 * Replication: each server's replica of a stream or consumer, the raft groups behind them,
 * and the JetStream meta group; plus KV buckets and object stores, which are streams.
 *
 * Replicas (stream_replica, consumer_replica) are keyed by (asset, server). Every server's
 * JSZ reply lists each asset it holds a replica of; that server's OWN copy of the state is
 * kept (what tells an unsynced replica), next to what the asset's leader says about that
 * peer in its `cluster.replicas[]` (current, offline, active, lag). A peer the leader lists
 * that did not answer still gets a row, from the leader's view only (answered = false).
 *
 * Raft groups are keyed by (domain, group name). JSZ names the groups of streams and
 * consumers only from 2.9.15 (`raft: true`); on older servers only the meta group
 * (`_meta_`) has a row. RAFTZ (2.10.26+) figures are per (group, server): they go on the
 * row of that server's replica (stream_replica_stats, consumer_replica_stats) or, for the
 * meta group, on its meta_stats row; they are NULL where the server has no RAFTZ.
 *
 * The meta group has one hx.meta_stats row per (epoch, server reporting a meta_cluster), so
 * that servers disagreeing about the leader stay visible (nats-monitoring.md §0.4, §8.5);
 * hx.meta sums them up per epoch and domain.
 *
 * stream_replica_opts and consumer_replica_opts hold no configuration (a replica has none of
 * its own); they exist because every kind has the three tables, and stay empty.
 */
import { table, type ColumnDef } from "./ddl.ts";
import { REPLICATION_VIEWS } from "./replication-views.ts";

const EPOCH: ColumnDef = ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."];
const OPTS_EPOCH: ColumnDef = [
  "epoch",
  "TIMESTAMPTZ NOT NULL",
  "First epoch with this configuration; it holds until the entity's next row.",
];
const FIRST: ColumnDef = ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which it was first seen."];

/** Placeholder _opts table of a kind without configuration. */
function emptyOpts(kind: string, pk: string): string {
  return table(
    `hx.${kind}_opts`,
    `No configuration is kept per ${kind.replace("_", " ")}; the table exists because every kind has _ident, _opts and _stats, and stays empty.`,
    [[pk, "INTEGER NOT NULL", `Replica (hx.${kind}_ident).`], OPTS_EPOCH],
    [`PRIMARY KEY (${pk}, epoch)`],
  );
}

const REPLICA_COMMON: ColumnDef[] = [
  [
    "answered",
    "BOOLEAN NOT NULL",
    "Whether the server answered JSZ with its own copy; false for a peer only the leader listed (own-copy columns NULL).",
  ],
  [
    "is_leader",
    "BOOLEAN NOT NULL",
    "Whether this replica is the leader (its copy names this server as leader, or it is the one copy of a non-clustered asset).",
  ],
  [
    "leader_seen",
    "VARCHAR",
    "Leader as this server's copy names it; NULL when it names none or did not answer.",
  ],
];

const LEADER_VIEW: ColumnDef[] = [
  [
    "current",
    "BOOLEAN",
    "Leader's view: peer is current. Stays true for an offline peer (see offline). True for the leader itself; NULL when the leader did not answer.",
  ],
  ["offline", "BOOLEAN", "Leader's view: peer is offline. False for the leader itself."],
  [
    "active_ns",
    "BIGINT",
    "Leader's view: nanoseconds since the peer was last heard from; NULL for the leader itself.",
  ],
  [
    "lag",
    "BIGINT",
    "Leader's view: raft entries the peer is behind (0 when absent); 0 for the leader itself.",
  ],
];

const RAFTZ: ColumnDef[] = [
  [
    "raft_state",
    "VARCHAR",
    "RAFTZ (2.10.26+): this server's raft state in the group (LEADER, FOLLOWER, CANDIDATE…).",
  ],
  ["raft_term", "BIGINT", "RAFTZ: current term as this server sees it."],
  ["raft_committed", "BIGINT", "RAFTZ: highest log index this server knows is committed."],
  ["raft_applied", "BIGINT", "RAFTZ: highest log index this server has applied."],
  ["raft_pindex", "BIGINT", "RAFTZ: index of this server's last log entry."],
  ["raft_catching_up", "BOOLEAN", "RAFTZ: whether this server is catching up."],
];

function identTable(kind: string, pk: string, asset: string, what: string): string {
  return table(
    `hx.${kind}_ident`,
    `Every (${asset}, server) pair ever seen: a server holding a replica of a ${asset}.`,
    [
      [pk, "INTEGER PRIMARY KEY", "Stable integer key of the replica."],
      [`${asset}_pk`, "INTEGER NOT NULL", `${what} (hx.${asset}_ident).`],
      ["server_pk", "INTEGER NOT NULL", "Server holding the replica (hx.server_ident)."],
      FIRST,
    ],
    [`UNIQUE (${asset}_pk, server_pk)`],
  );
}

export const migration = {
  version: 5,
  name: "stream and consumer replicas, raft groups, meta group, KV and object store views",
  sql: [
    identTable("stream_replica", "stream_replica_pk", "stream", "Stream"),
    emptyOpts("stream_replica", "stream_replica_pk"),
    table(
      "hx.stream_replica_stats",
      "Per-epoch state of each stream replica: the server's own copy, and the leader's view of that peer.",
      [
        EPOCH,
        ["stream_replica_pk", "INTEGER NOT NULL", "Replica (hx.stream_replica_ident)."],
        ...REPLICA_COMMON,
        ["messages", "BIGINT", "Own copy: messages stored on this server."],
        ["bytes", "BIGINT", "Own copy: bytes stored on this server."],
        ["first_seq", "BIGINT", "Own copy: first sequence stored."],
        ["last_seq", "BIGINT", "Own copy: last sequence stored; behind the leader's means not in sync."],
        ["num_deleted", "BIGINT", "Own copy: interior deleted messages."],
        ...LEADER_VIEW,
        ...RAFTZ,
      ],
    ),
    identTable("consumer_replica", "consumer_replica_pk", "consumer", "Consumer"),
    emptyOpts("consumer_replica", "consumer_replica_pk"),
    table(
      "hx.consumer_replica_stats",
      "Per-epoch state of each consumer replica: the server's own copy, and the consumer leader's view of that peer.",
      [
        EPOCH,
        ["consumer_replica_pk", "INTEGER NOT NULL", "Replica (hx.consumer_replica_ident)."],
        ...REPLICA_COMMON,
        ["delivered_stream_seq", "BIGINT", "Own copy: last stream sequence delivered."],
        ["delivered_consumer_seq", "BIGINT", "Own copy: last consumer sequence delivered."],
        ["ack_floor_stream_seq", "BIGINT", "Own copy: stream sequence below which all is acknowledged."],
        ["ack_floor_consumer_seq", "BIGINT", "Own copy: consumer sequence below which all is acknowledged."],
        ["num_ack_pending", "BIGINT", "Own copy: delivered messages awaiting acknowledgement."],
        ["num_pending", "BIGINT", "Own copy: messages not yet delivered."],
        ["num_redelivered", "BIGINT", "Own copy: messages redelivered at least once."],
        ["num_waiting", "BIGINT", "Own copy: pull requests waiting."],
        ...LEADER_VIEW,
        ...RAFTZ,
      ],
    ),
    table(
      "hx.raft_group_ident",
      "Every raft group ever seen, keyed by JetStream domain and group name: the meta group (_meta_), and a group per replicated stream or consumer.",
      [
        ["raft_group_pk", "INTEGER PRIMARY KEY", "Stable integer key of the group."],
        ["domain", "VARCHAR NOT NULL", "JetStream domain of the group's servers; empty when none."],
        ["name", "VARCHAR NOT NULL", "Raft group name (_meta_ for the meta group)."],
        ["kind", "VARCHAR NOT NULL", "What the group replicates: meta, stream or consumer."],
        ["account", "VARCHAR", "Account of the stream or consumer; NULL for the meta group."],
        ["stream_pk", "INTEGER", "Stream of the group, or of its consumer (hx.stream_ident)."],
        ["consumer_pk", "INTEGER", "Consumer of a consumer group (hx.consumer_ident)."],
        FIRST,
      ],
      ["UNIQUE (domain, name)"],
    ),
    table(
      "hx.raft_group_opts",
      "Membership of each raft group as its leader reports it; a row is written when it changes.",
      [
        ["raft_group_pk", "INTEGER NOT NULL", "Group (hx.raft_group_ident)."],
        OPTS_EPOCH,
        ["cluster", "VARCHAR", "Cluster of the group (for the meta group, the leader's cluster)."],
        ["members", "VARCHAR[]", "Names of the group's servers, leader included, sorted."],
      ],
      ["PRIMARY KEY (raft_group_pk, epoch)"],
    ),
    table(
      "hx.raft_group_stats",
      "Per-epoch health of each raft group from its leader's view; per-server RAFTZ figures are on the replica and meta_stats rows.",
      [
        EPOCH,
        ["raft_group_pk", "INTEGER NOT NULL", "Group (hx.raft_group_ident)."],
        ["leader_server_pk", "INTEGER", "Leader (hx.server_ident); NULL when no answering server leads it."],
        ["servers_reporting", "INTEGER NOT NULL", "Servers whose reply listed the group."],
        ["peers", "INTEGER", "Group size: the leader plus the peers it lists; NULL without a leader."],
        ["peers_offline", "INTEGER", "Peers the leader reports offline."],
        ["peers_lagging", "INTEGER", "Peers the leader reports online but not current or behind."],
      ],
    ),
    table("hx.meta_ident", "Every JetStream meta group ever seen: one per JetStream domain.", [
      ["meta_pk", "INTEGER PRIMARY KEY", "Stable integer key of the meta group."],
      ["domain", "VARCHAR NOT NULL UNIQUE", "JetStream domain; empty when none."],
      FIRST,
    ]),
    table(
      "hx.meta_opts",
      "Meta group membership as its leader reports it; a row is written when it changes.",
      [
        ["meta_pk", "INTEGER NOT NULL", "Meta group (hx.meta_ident)."],
        OPTS_EPOCH,
        ["cluster_size", "INTEGER", "Meta group size as the leader reports it."],
        ["members", "VARCHAR[]", "Names of the meta group's servers, leader included, sorted."],
      ],
      ["PRIMARY KEY (meta_pk, epoch)"],
    ),
    table(
      "hx.meta_stats",
      "Per-epoch meta group view of each server whose JSZ reports a meta_cluster: one row per (epoch, server), so disagreement about the leader shows.",
      [
        EPOCH,
        ["meta_pk", "INTEGER NOT NULL", "Meta group (hx.meta_ident)."],
        ["server_pk", "INTEGER NOT NULL", "Reporting server (hx.server_ident)."],
        ["cluster", "VARCHAR", "meta_cluster.name: the reporting server's cluster."],
        ["leader", "VARCHAR", "Meta leader as this server sees it; NULL when it sees none."],
        ["is_leader", "BOOLEAN NOT NULL", "Whether this server says it is the meta leader."],
        ["cluster_size", "INTEGER", "Meta group size as this server sees it."],
        ["quorum", "INTEGER", "Servers needed for quorum: floor(cluster_size / 2) + 1."],
        ["peers_offline", "INTEGER", "On the leader's row: peers it reports offline; NULL on other rows."],
        ["peers_lagging", "INTEGER", "On the leader's row: peers online but not current or behind."],
        [
          "quorum_ok",
          "BOOLEAN",
          "On the leader's row: whether cluster_size - peers_offline reaches quorum; NULL on other rows.",
        ],
        ...RAFTZ,
      ],
    ),
    ...REPLICATION_VIEWS,
  ].join("\n\n"),
};
