/**
 * Each hx.gateway_stats row says when its link was last up and to which server
 * (`last_connected_epoch`, `last_remote_server`): the fold carries them from the link's
 * previous row (kinds/gateways.ts). cluster-007 needs them for a link it finds lost; it read
 * them from the link's history, the whole retention for a configured link that was never up,
 * at every epoch. Rows folded before are filled here from the rows before them.
 */
import { quote } from "./ddl.ts";

const COMMENTS: readonly (readonly [string, string])[] = [
  [
    "last_connected_epoch",
    "Latest epoch, up to this one, in which the link was connected (this epoch when it is); NULL when it never was as far as the catalog knows.",
  ],
  ["last_remote_server", "Remote server the link was connected to at last_connected_epoch."],
];

const SQL = [
  "ALTER TABLE hx.gateway_stats ADD COLUMN last_connected_epoch TIMESTAMPTZ;",
  "ALTER TABLE hx.gateway_stats ADD COLUMN last_remote_server VARCHAR;",
  ...COMMENTS.map(([column, text]) => `COMMENT ON COLUMN hx.gateway_stats.${column} IS ${quote(text)};`),
  // Gateways are few: one window over the table, whose rows are links times epochs.
  `UPDATE hx.gateway_stats AS s SET last_connected_epoch = w.up, last_remote_server = w.remote
   FROM (SELECT gateway_pk, epoch,
                max(epoch) FILTER (WHERE connected) OVER up_to AS up,
                arg_max_null(remote_server, epoch) FILTER (WHERE connected) OVER up_to AS remote
         FROM hx.gateway_stats
         WINDOW up_to AS (PARTITION BY gateway_pk ORDER BY epoch ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS w
   WHERE w.gateway_pk = s.gateway_pk AND w.epoch = s.epoch AND w.up IS NOT NULL;`,
].join("\n");

export const migration = {
  version: 40,
  name: "hx.gateway_stats carries when each link was last up and to which server",
  sql: SQL,
};
