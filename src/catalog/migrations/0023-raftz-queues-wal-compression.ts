/**
 * What opt-sys-010, opt-sys-023 and opt-cost-004 read and the fold did not keep: each raft
 * node's internal queue lengths and write-ahead log size from RAFTZ (2.10.26+, RaftzGroup
 * `ipq_*_len` and `wal`, a StreamState), on the same rows as the other raft_* figures (the
 * server's stream or consumer replica, or its meta_stats row for the meta group); and a
 * stream's storage compression (stream config `compression`, 2.10.0+). All are NULL on
 * servers that do not report them.
 *
 * hx.streams, hx.stream_replicas and hx.consumer_replicas are created again from their
 * definitions so that their `o.*` / `s.*` show the new columns (DuckDB fixes a view's
 * columns when it is created). hx.meta aggregates meta_stats and names its columns: it is
 * left as it is.
 */
import { STREAMS_VIEW } from "./0002-views.ts";
import { quote, type ColumnDef } from "./ddl.ts";
import { REPLICATION_VIEWS } from "./replication-views.ts";

const [STREAM_REPLICAS_VIEW, CONSUMER_REPLICAS_VIEW] = REPLICATION_VIEWS;

const RAFTZ_MORE: ColumnDef[] = [
  [
    "raft_ipq_proposal_len",
    "BIGINT",
    "RAFTZ (2.10.26+): proposals waiting in this server's proposal queue of the group (ipq_proposal_len); only a leader takes proposals.",
  ],
  [
    "raft_ipq_entry_len",
    "BIGINT",
    "RAFTZ (2.10.26+): append entries from the leader waiting to be processed by this server (ipq_entry_len).",
  ],
  [
    "raft_ipq_resp_len",
    "BIGINT",
    "RAFTZ (2.10.26+): follower responses waiting to be processed by this server (ipq_resp_len); a leader's queue.",
  ],
  [
    "raft_ipq_apply_len",
    "BIGINT",
    "RAFTZ (2.10.26+): committed entries waiting to be applied by this server (ipq_apply_len).",
  ],
  [
    "raft_wal_messages",
    "BIGINT",
    "RAFTZ (2.10.26+): entries in this server's raft write-ahead log of the group (wal.messages).",
  ],
  [
    "raft_wal_bytes",
    "BIGINT",
    "RAFTZ (2.10.26+): bytes of this server's raft write-ahead log of the group (wal.bytes).",
  ],
];

function addColumns(table: string, columns: readonly ColumnDef[]): string[] {
  return columns.flatMap(([name, type, comment]) => [
    `ALTER TABLE ${table} ADD COLUMN ${name} ${type};`,
    `COMMENT ON COLUMN ${table}.${name} IS ${quote(comment)};`,
  ]);
}

export const migration = {
  version: 23,
  name: "raft nodes' internal queue lengths and WAL size from RAFTZ; stream compression",
  sql: [
    ...addColumns("hx.stream_replica_stats", RAFTZ_MORE),
    ...addColumns("hx.consumer_replica_stats", RAFTZ_MORE),
    ...addColumns("hx.meta_stats", RAFTZ_MORE),
    ...addColumns("hx.stream_opts", [
      [
        "compression",
        "VARCHAR",
        "Storage compression (2.10.0+): none or s2; NULL when the server does not report it (before 2.10).",
      ],
    ]),
    "DROP VIEW hx.streams;",
    STREAMS_VIEW,
    "DROP VIEW hx.stream_replicas;",
    STREAM_REPLICAS_VIEW!,
    "DROP VIEW hx.consumer_replicas;",
    CONSUMER_REPLICAS_VIEW!,
  ].join("\n\n"),
};
