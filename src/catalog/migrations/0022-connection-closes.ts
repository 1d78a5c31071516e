/**
 * Closed client connections, from the closed-connection ring buffer each server keeps (CONNZ
 * with `state` 1, newest first). A close is recorded once, in the epoch that first sees it;
 * conn-003 reads it. hx.closed_connections names it like hx.connections names an open one.
 */
import { table, view } from "./ddl.ts";

export const migration = {
  version: 22,
  name: "closed client connections and why they closed",
  sql: [
    table(
      "hx.connection_closes",
      "Client connections closed, each recorded once in the epoch that first saw it in its server's closed-connection list (CONNZ state 1). A close is not recorded when, first seen, it is older than five minutes (or the time since the previous epoch, up to a day) on its server's clock: before natsmon watched, it is not news. Keyed by connection_pk (hx.connection_ident, the same identity as while it was open).",
      [
        ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch that first saw the connection closed (hx.epochs)."],
        ["connection_pk", "INTEGER NOT NULL", "Connection (hx.connection_ident)."],
        ["stop", "TIMESTAMPTZ NOT NULL", "When the server closed the connection (its clock)."],
        [
          "reason",
          "VARCHAR",
          "Why, as the server says: Client Closed, Slow Consumer (Pending Bytes), Authentication Failure, Stale Connection, Server Shutdown, Read Error, …",
        ],
        ["in_msgs", "BIGINT", "Messages received from the client over its lifetime."],
        ["out_msgs", "BIGINT", "Messages sent to the client over its lifetime."],
        ["in_bytes", "BIGINT", "Bytes received from the client over its lifetime."],
        ["out_bytes", "BIGINT", "Bytes sent to the client over its lifetime."],
        ["pending_bytes", "BIGINT", "Bytes still waiting to be written to the client when it closed."],
        ["subscriptions", "BIGINT", "Subscriptions it had when it closed."],
      ],
    ),
    view(
      "hx.closed_connections",
      "Each recorded close with its server name, identity and what the connection was (hx.connection_closes + _ident + the _opts in force when it closed).",
      `
SELECT x.epoch, sv.name AS server, i.cid, i.start, x.connection_pk, i.server_pk,
       x.stop, x.reason, o.* EXCLUDE (connection_pk, epoch), x.* EXCLUDE (epoch, connection_pk, stop, reason)
FROM hx.connection_closes x
JOIN hx.connection_ident i ON i.connection_pk = x.connection_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.connection_opts o ON o.connection_pk = x.connection_pk AND x.epoch >= o.epoch`,
      [["server", "", "Name of the server the client was connected to."]],
    ),
  ].join("\n\n"),
};
