/**
 * natsmon's own connections to the monitored system (the scrape connection, and one
 * service-discovery connection per configured account) are clients of their accounts like
 * any other in STATZ and CONNZ. The checks that count an account's clients must leave them
 * out, and a connection name cannot tell them apart (a user may name a client "natsmon …"),
 * so each epoch records them as the commit marker names them: server and client id, as each
 * server gave them in its INFO. hx.own_connections lists them one a row, with their account.
 */
import { quote, view } from "./ddl.ts";

export const migration = {
  version: 30,
  name: "epochs record natsmon's own connections to the monitored system",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN own_connections VARCHAR[];",
    `COMMENT ON COLUMN hx.epochs.own_connections IS ${quote(
      "natsmon's own connections to the monitored system this epoch (scrape, service discovery), one JSON object each: " +
        '{"server", "cid", "account"} (account absent for the scrape connection, which is in the system account); ' +
        "hx.own_connections lists them as rows. NULL for epochs folded before this column.",
    )};`,
    view(
      "hx.own_connections",
      "natsmon's own connections to the monitored system per epoch (hx.epochs.own_connections), as the server each is on numbers it (CONNZ cid). The checks that count an account's clients leave them out.",
      `
SELECT o.epoch, o.server, sv.server_pk, o.cid, coalesce(o.account, so.system_account) AS account
FROM (
  SELECT epoch, c->>'server' AS server, CAST(c->>'cid' AS BIGINT) AS cid, c->>'account' AS account
  FROM (SELECT epoch, unnest(own_connections) AS c FROM hx.epochs)
) o
LEFT JOIN hx.server_ident sv ON sv.name = o.server
ASOF LEFT JOIN hx.server_opts so ON so.server_pk = sv.server_pk AND o.epoch >= so.epoch`,
      [
        ["epoch", "", "Epoch whose commit marker names the connection (hx.epochs)."],
        ["server", "", "Name of the server the connection is on."],
        ["server_pk", "", "That server (hx.server_ident); NULL when the catalog has not seen it."],
        ["cid", "", "Client id the server gave the connection (hx.connections.cid)."],
        [
          "account",
          "",
          "Account of the connection: the configured service-discovery account, else the server's system account (the scrape connection).",
        ],
      ],
    ),
  ].join("\n"),
};
