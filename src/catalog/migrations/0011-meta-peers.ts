/**
 * The meta group as the checks need it (meta-001, meta-004, meta-008): until now only the
 * leader's offline and lagging counts were kept, not which peers they are. The leader's
 * hx.meta_stats row now also lists its peers, one entry per peer in the same position of
 * each peer_* list (sorted by name), so a finding can name the offline peer. Every row gets
 * the server's meta API queue (`meta_cluster.pending`, 2.10.21+) and its last meta snapshot
 * (`meta_cluster.snapshot`, 2.11.11 / 2.12.2+); NULL where the server does not report them.
 */
import { quote } from "./ddl.ts";

const COLUMNS: readonly (readonly [name: string, type: string, comment: string])[] = [
  [
    "peer_names",
    "VARCHAR[]",
    "On the leader's row: its peers (meta_cluster.replicas names), sorted; the other peer_* lists follow this order. NULL on other rows.",
  ],
  [
    "peer_offline",
    "BOOLEAN[]",
    "On the leader's row: per peer of peer_names, whether the leader reports it offline.",
  ],
  [
    "peer_current",
    "BOOLEAN[]",
    "On the leader's row: per peer of peer_names, whether the leader reports it current (stays true for an offline peer).",
  ],
  [
    "peer_active_ns",
    "BIGINT[]",
    "On the leader's row: per peer of peer_names, nanoseconds since the leader last heard from it.",
  ],
  [
    "peer_lag",
    "BIGINT[]",
    "On the leader's row: per peer of peer_names, raft entries it is behind (0 when absent).",
  ],
  [
    "pending",
    "BIGINT",
    "meta_cluster.pending (2.10.21+): JetStream API requests queued on this server for the meta layer; NULL before.",
  ],
  [
    "snapshot_pending_entries",
    "BIGINT",
    "meta_cluster.snapshot.pending_entries (2.11.11, 2.12.2+): meta log entries not yet compacted into a snapshot.",
  ],
  [
    "snapshot_pending_size",
    "BIGINT",
    "meta_cluster.snapshot.pending_size (2.11.11, 2.12.2+): bytes of those entries.",
  ],
  [
    "snapshot_last_time",
    "TIMESTAMPTZ",
    "meta_cluster.snapshot.last_time (2.11.11, 2.12.2+): when this server last took a meta snapshot; NULL when never.",
  ],
  [
    "snapshot_last_duration_ns",
    "BIGINT",
    "meta_cluster.snapshot.last_duration (2.11.11, 2.12.2+): how long that snapshot took, nanoseconds; NULL when never.",
  ],
];

export const migration = {
  version: 11,
  name: "meta group: the leader's per-peer view, meta API pending and meta snapshot figures",
  sql: COLUMNS.flatMap(([name, type, comment]) => [
    `ALTER TABLE hx.meta_stats ADD COLUMN ${name} ${type};`,
    `COMMENT ON COLUMN hx.meta_stats.${name} IS ${quote(comment)};`,
  ]).join("\n"),
};
