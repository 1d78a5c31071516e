/**
 * Whether a connection's user JWT is a bearer token (`nats.bearer_token`: the server does
 * not ask the client to sign its nonce, so whoever holds the JWT is the user). CONNZ with
 * `auth` sends the user JWT; the fold reads this one claim and never stores the JWT.
 * user-001 needs it. hx.connections is created again so that its `o.*` shows the column
 * (DuckDB fixes a view's columns when it is created).
 */
import { view } from "./ddl.ts";

export const migration = {
  version: 21,
  name: "connections record whether their user JWT is a bearer token",
  sql: [
    "ALTER TABLE hx.connection_opts ADD COLUMN bearer_token BOOLEAN;",
    "COMMENT ON COLUMN hx.connection_opts.bearer_token IS 'Whether the user JWT the client connected with is a bearer token (nats.bearer_token: no nonce signature asked); NULL when the client used no JWT.';",
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
  ].join("\n\n"),
};
