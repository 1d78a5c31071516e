import type { Check } from "../check.ts";

/**
 * Client connections a server closed (hx.closed_connections, each close recorded once by the
 * fold in the epoch that first saw it), grouped by what caused them: account, user and
 * reason, over all servers. A group is a finding at every epoch with a close of it within the
 * window before the epoch (by the close's own time), so a client retrying with a revoked
 * credential every few seconds is one finding that stays while it retries, and resolves once
 * it has stopped for the window; each close used to be its own finding, firing in the epoch
 * that saw it and resolving in the next.
 *
 * The user is the fold's: `authorized_user`, else the subject of the user JWT the client
 * presented (2.9.10 lists a JWT user's closed connection without `authorized_user`); the account is the
 * one the client was bound to, else the one its user JWT was issued by (a client refused at
 * authentication is bound to none). A user is named within its account: entity_pk is the
 * account's (0 when unknown), entity_key the user and reason.
 */
export const conn003: Check = {
  code: "conn-003",
  name: "Connection Stopped",
  description:
    "Servers closed client connections for a reason other than the client closing them: a slow consumer (pending bytes or write deadline), a stale connection (missed pings), an authentication or authorization failure, revoked or expired credentials, a protocol or payload violation, a read or write error, the account's or server's connection limit, a server shutdown, and so on (CONNZ's closed-connection list). Closes with the same cause are one finding: one per account, user and reason, over all servers, while such closes keep happening within the window, with how many there were, the first and last, the servers and a sample of the clients. It resolves once no such close happened for the window. The user is the one the client authenticated as, else the subject of the user JWT it presented (the server lists a closed connection's JWT but not its user); the account is the one it was bound to, else the one its JWT was issued by. A client refused without a user or JWT (a wrong password) is grouped under no user. Closes the client asked for (`Client Closed`) are normal and not reported, nor are leafnode links (leaf-005 reports a link closing repeatedly and leaf-004 a configured remote that is not connected).",
  remediation:
    "Read the reason, and the clients and servers in the detail. Slow consumer: make the client read faster or move it to a JetStream consumer. Stale connection: check the client's host and network, or `ping_interval`/`ping_max`. " +
    "Authentication Failure: in server configuration, fix the client's user, password, token or nkey (the server log names the user); in operator (JWT) mode, check the account is known to the servers (`nsc push -a <account>`), that the user JWT is signed by the account or one of its signing keys (`nsc describe user --account <account> --name <user>`), and that the client's creds file holds the seed matching the JWT (`nsc generate creds --account <account> --name <user>`). " +
    "Credentials Revoked: the account JWT revokes the user (`nsc revocations list-users --account <account>`); give the client new credentials (`nsc add user --account <account> --name <new>` and `nsc generate creds`), or lift the revocation if it was a mistake (`nsc revocations delete-user --account <account> --name <user>`, then `nsc push -a <account>`), and stop the clients still using the revoked creds. " +
    "Authentication Expired: the user JWT's expiry passed (`nsc describe user`): `nsc edit user --account <account> --name <user> --expiry <date>` and `nsc generate creds` again, then deploy the new creds file; the server takes a new user JWT without a push. " +
    "Maximum connections: the account's limit (configuration: the account's `max_connections`; JWT: `nsc edit account --name <account> --conns <n>`, then `nsc push -a <account>`) or the server's `max_connections`; or close leaked connections (see accounts-001, user-002). " +
    "Maximum payload: the client publishes messages larger than allowed: fix it, or raise the server's `max_payload` (JWT: the account's `nsc edit account --name <account> --payload <bytes>` and `nsc push`, or the user's `nsc edit user --payload <bytes>` and new creds). " +
    "`nats server report connections --state closed` (with `--closed-reason '<reason>'` to narrow it) lists the servers' recent closes.",
  scope: "connection",
  entityType: "user",
  severity: "info",
  category: "errors",
  optimization: false,
  params: [
    {
      name: "p_window_minutes",
      default: 10,
      description:
        "A finding stays while a close of its account, user and reason happened within this many minutes before the epoch.",
    },
  ],
  detailColumns: [
    {
      name: "account",
      type: "VARCHAR",
      description:
        "Account the connections were bound to, else the one their user JWT was issued by; NULL when neither.",
    },
    {
      name: "user",
      type: "VARCHAR",
      description:
        "User the clients authenticated as, else the subject (public key) of the user JWT they presented; NULL when neither.",
    },
    { name: "user_name", type: "VARCHAR", description: "The user JWT's name (name_tag), if any." },
    { name: "reason", type: "VARCHAR", description: "Why the server closed the connections." },
    { name: "closes", type: "BIGINT", description: "Closes within the window, each counted once." },
    {
      name: "first_close",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "First close in the window (server clock).",
    },
    {
      name: "last_close",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Last close in the window (server clock).",
    },
    { name: "servers", type: "VARCHAR[]", description: "Servers that closed them, sorted." },
    {
      name: "clients",
      type: "VARCHAR[]",
      description: "Up to five of the clients closed, as name@address (- for no name), sorted.",
    },
    {
      name: "pending_bytes",
      type: "BIGINT",
      description: "The most bytes still waiting to be written to one of the clients when it closed.",
    },
    { name: "window_minutes", type: "DOUBLE", description: "Window in force, minutes." },
  ],
  sql: `
WITH e AS (SELECT epoch FROM checks.epochs_in(ep_from, ep_to)),
closes AS (
  SELECT c.epoch AS seen, c.connection_pk, c.server, c.stop, c.reason, c.pending_bytes,
         coalesce(nullif(c.account, ''), nullif(c.jwt_account, '')) AS account,
         nullif(c.authorized_user, '') AS user, nullif(c.name_tag, '') AS user_name,
         coalesce(nullif(c.name, ''), '-') || '@' || coalesce(c.ip, '?') AS client
  FROM hx.closed_connections c
  WHERE c.epoch <= ep_to AND c.stop > ep_from - to_milliseconds(CAST(CAST(p_window_minutes AS DOUBLE) * 60000 AS BIGINT))
    AND coalesce(c.reason, '') NOT IN ('', 'Client Closed') AND coalesce(c.kind, 'Client') = 'Client'
),
grouped AS (
  SELECT e.epoch, c.account, c.user, c.reason, max(c.user_name) AS user_name,
         count(DISTINCT c.connection_pk) AS closes, min(c.stop) AS first_close, max(c.stop) AS last_close,
         list_sort(list(DISTINCT c.server)) AS servers,
         list_slice(list_sort(list(DISTINCT c.client)), 1, 5) AS clients,
         max(c.pending_bytes) AS pending_bytes
  FROM e
  JOIN closes c ON c.seen <= e.epoch
   AND c.stop > e.epoch - to_milliseconds(CAST(CAST(p_window_minutes AS DOUBLE) * 60000 AS BIGINT))
  GROUP BY e.epoch, c.account, c.user, c.reason
)
SELECT g.epoch, coalesce(a.account_pk, 0) AS entity_pk,
       coalesce(g.user_name, g.user, 'unknown user') || ' (' || coalesce(nullif(o.name_tag, ''), g.account, 'no account') || '): ' || g.reason AS entity_name,
       coalesce(g.user || ': ', '') || g.reason AS entity_key,
       NULL::VARCHAR AS server, 'info' AS severity,
       g.account, g.user, g.user_name, g.reason, CAST(g.closes AS BIGINT) AS closes,
       g.first_close, g.last_close, CAST(g.servers AS VARCHAR[]) AS servers,
       CAST(g.clients AS VARCHAR[]) AS clients, CAST(g.pending_bytes AS BIGINT) AS pending_bytes,
       CAST(p_window_minutes AS DOUBLE) AS window_minutes
FROM grouped g
LEFT JOIN hx.account_ident a ON a.name = g.account
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = a.account_pk AND g.epoch >= o.epoch`,
};
