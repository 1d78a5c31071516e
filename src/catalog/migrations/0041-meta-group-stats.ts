/**
 * hx.meta_group_stats: the meta group's figures of each epoch, judged from its servers'
 * hx.meta_stats rows (the leader, whether they agree on it, quorum), written by the fold
 * (kinds/meta.ts); hx.meta shows them with the domain and members.
 *
 * hx.meta judged them as it was read, with window functions and a GROUP BY over every
 * epoch's rows. A filter on epoch known only as the query runs (`epoch = (SELECT max(epoch)
 * FROM hx.epochs)`) reaches no scan through an aggregate, so the latest epoch took the whole
 * retention's judgement: 207 ms on a medium system's catalog of one week (13 ms by a
 * parameter), about 1 s at the default retention. The view now reads a table, which the
 * filter reaches like any other.
 *
 * Rows of epochs folded before are filled here from hx.meta as it stood, so they show what
 * they showed. The view keeps its columns and comments.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { table, type ColumnDef } from "./ddl.ts";
import { rewriteStoredViews } from "./view-rewrite.ts";

/** The view's judged columns, in its order, with the types it showed them with. */
const COLUMNS: readonly ColumnDef[] = [
  ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."],
  ["meta_pk", "INTEGER NOT NULL", "Meta group (hx.meta_ident)."],
  [
    "leader",
    "VARCHAR",
    "Meta leader: the server claiming it, or the one the others name when it did not answer; NULL when there is none (no quorum).",
  ],
  [
    "leader_reporting",
    "BOOLEAN",
    "Whether the leader answered: the offline and lagging counts and quorum_ok come from its reply.",
  ],
  ["leader_agreed", "BOOLEAN", "Whether there is a leader and every reporting server names it."],
  [
    "leaders_seen",
    "VARCHAR[]",
    "Distinct leaders named by the reporting servers, sorted; NULL when none names one.",
  ],
  [
    "servers_disagreeing",
    "VARCHAR[]",
    "Servers naming another leader than the leader column, or none, sorted; when there is no leader, those still naming one.",
  ],
  [
    "leaders_claiming",
    "BIGINT",
    "Servers saying they are the meta leader; more than one during an election.",
  ],
  ["servers_reporting", "BIGINT", "Servers whose JSZ reported the meta group this epoch."],
  ["cluster_size", "INTEGER", "Meta group size, as the leader reports it (else the largest reported)."],
  ["peers_offline", "INTEGER", "Peers the leader reports offline; NULL when the leader did not answer."],
  ["peers_lagging", "INTEGER", "Peers the leader reports online but not current or behind."],
  [
    "quorum_ok",
    "BOOLEAN",
    "Whether the leader answered and cluster_size - peers_offline reaches quorum; false without a leader; NULL when the leader did not answer (unknown).",
  ],
];

const NAMES = COLUMNS.map(([name]) => name).join(", ");

/** hx.meta over the table: the same columns, in the same order, the configuration by range. */
const VIEW = `CREATE VIEW hx.meta AS
SELECT a.epoch, i.domain, a.meta_pk, a.leader, a.leader_reporting, a.leader_agreed, a.leaders_seen,
       a.servers_disagreeing, a.leaders_claiming, a.servers_reporting, a.cluster_size,
       a.cluster_size // 2 + 1 AS quorum, a.peers_offline, a.peers_lagging, a.quorum_ok, o.members
FROM hx.meta_group_stats a
JOIN hx.meta_ident i ON i.meta_pk = a.meta_pk
LEFT JOIN (SELECT *, coalesce(lead(epoch) OVER (PARTITION BY meta_pk ORDER BY epoch), 'infinity'::TIMESTAMPTZ) AS in_force_until
           FROM hx.meta_opts) o
  ON o.meta_pk = a.meta_pk AND a.epoch >= o.epoch AND a.epoch < o.in_force_until;`;

export const migration = {
  version: 41,
  name: "hx.meta_group_stats holds the meta group's judged figures of each epoch; hx.meta reads them",
  sql: [
    table(
      "hx.meta_group_stats",
      "Per-epoch JetStream meta group, one row per domain, judged from its servers' hx.meta_stats rows when the epoch is folded: the leader, whether all servers agree on it, and whether quorum holds (hx.meta shows them with the domain and members).",
      COLUMNS,
    ),
    // Meta groups are few (one per domain): one statement over every epoch, in epoch order as
    // folds append them, so zone maps skip what a query does not read.
    `INSERT INTO hx.meta_group_stats (${NAMES}) SELECT ${NAMES} FROM hx.meta ORDER BY epoch, meta_pk;`,
  ].join("\n"),
  run: (con: DuckDBConnection) => rewriteStoredViews(con, (view, sql) => (view === "meta" ? VIEW : sql)),
};
