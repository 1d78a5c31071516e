import type { Check } from "../check.ts";
import { latestRowsCte } from "./idle-streams-sql.ts";

/**
 * A client connection that, at its latest epoch of the window, has been idle (CONNZ `idle`:
 * time since anything was last received or sent) for at least p_idle_minutes and has never
 * sent or received a message (its counters count since it connected). The connections are
 * narrowed on hx.connection_stats alone before anything names them: a large system has tens
 * of thousands of connections per epoch.
 */
export const optIdle007: Check = {
  code: "opt-idle-007",
  name: "Idle Client Connections",
  description:
    "A client connection has been idle for longer than the threshold and has not sent or received a single message since it connected. It holds a socket, a file descriptor and server memory, and counts against the server's and the account's connection limits, for nothing: typically a connection an application opened and forgot (one per request or per thread, never closed), a health probe that only connects, or a subscriber whose subject nobody publishes to.",
  remediation:
    "Find the client from the detail (name, address, account): `nats server report connections --account <account>`. Fix the application to reuse one connection per process and close those it does not need; name connections (the client's `name` option) so that they can be told apart. If it is a subscriber waiting on purpose for rare messages, check that its subjects are right (`nats server request subscriptions`).",
  scope: "connection",
  entityType: "connection",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_idle_minutes",
      default: 5,
      description: "Minutes without activity from which a connection that never moved a message is reported.",
    },
  ],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account the connection is bound to." },
    { name: "client_name", type: "VARCHAR", description: "Name the client gave itself, if any." },
    { name: "ip", type: "VARCHAR", description: "Client address." },
    {
      name: "idle_ns",
      type: "BIGINT",
      description: "Time since the connection's last activity, nanoseconds.",
    },
    { name: "subscriptions", type: "BIGINT", description: "Subscriptions the connection holds." },
  ],
  sql: `
WITH ${latestRowsCte("latest", "hx.connection_stats", "connection_pk")}
SELECT d.epoch, d.connection_pk AS entity_pk,
       sv.name || ' cid ' || i.cid || coalesce(' (' || nullif(o.name, '') || ')', '') AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'info' AS severity,
       o.account, o.name AS client_name, o.ip, CAST(d.idle_ns AS BIGINT) AS idle_ns,
       CAST(d.subscriptions AS BIGINT) AS subscriptions
FROM latest d
JOIN hx.connection_ident i ON i.connection_pk = d.connection_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.connection_opts o ON o.connection_pk = d.connection_pk AND d.epoch >= o.epoch
WHERE d.in_msgs = 0 AND d.out_msgs = 0 AND d.idle_ns >= p_idle_minutes * 60e9`,
};
