/**
 * The account a connection's user JWT was issued by (`nats.issuer_account`, else `iss`).
 * nats-server lists a client it refused before binding it to an account (Authentication
 * Failure, Credentials Revoked at connect) with its JWT but no `account`: conn-003 names the
 * account the user belongs to from this. The fold also fills `authorized_user` and
 * `name_tag` from the JWT's `sub` and `name` when the server leaves them out (2.9.10 does
 * for every closed connection of a JWT user); that needs no column. hx.connections and
 * hx.closed_connections are created again so that their `o.*` shows the new column (DuckDB
 * fixes a view's columns when it is created).
 */
import { quote, view } from "./ddl.ts";

export const migration = {
  version: 31,
  name: "connections record the account their user JWT was issued by",
  sql: [
    "ALTER TABLE hx.connection_opts ADD COLUMN jwt_account VARCHAR;",
    `COMMENT ON COLUMN hx.connection_opts.jwt_account IS ${quote(
      "Account the user JWT the client presented was issued by (nats.issuer_account, else the JWT's iss); NULL without a JWT. " +
        "Unlike account, set for a client refused before it was bound to an account (Authentication Failure).",
    )};`,
    `COMMENT ON COLUMN hx.connection_opts.authorized_user IS ${quote(
      "User it authenticated as (a user name or an nkey); when the server does not say (2.9.10 never does for a JWT user's closed connection), the subject of its user JWT.",
    )};`,
    `COMMENT ON COLUMN hx.connection_opts.name_tag IS ${quote(
      "Friendly name from the user JWT, if any (the server's name_tag, else the JWT's name).",
    )};`,
    "DROP VIEW hx.connections;",
    view(
      "hx.connections",
      "Per-epoch figures of each open client connection with its server name, identity and what it is (hx.connection_stats + _ident + _opts).",
      `
SELECT s.epoch, sv.name AS server, i.cid, i.start, s.connection_pk, i.server_pk,
       o.* EXCLUDE (connection_pk, epoch), s.* EXCLUDE (epoch, connection_pk)
FROM hx.connection_stats s
JOIN hx.connection_ident i ON i.connection_pk = s.connection_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.connection_opts o ON o.connection_pk = s.connection_pk AND s.epoch >= o.epoch`,
      [["server", "", "Name of the server the client is connected to."]],
    ),
    "DROP VIEW hx.closed_connections;",
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
