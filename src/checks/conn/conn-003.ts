import type { Check } from "../check.ts";
import { CONNECTION_COLUMNS } from "./conn-sql.ts";

export const conn003: Check = {
  code: "conn-003",
  name: "Connection Stopped",
  description:
    "A server closed a client connection for a reason other than the client closing it: a slow consumer (pending bytes or write deadline), a stale connection (missed pings), an authentication or authorization failure, a protocol or payload violation, a read or write error, the account's or server's connection limit, a server shutdown, and so on (CONNZ's closed-connection list). It fires once, in the epoch that first sees the close. Closes the client asked for (`Client Closed`) are normal and not reported, nor are leafnode links (the server lists their closes too; leaf-005 reports a link closing repeatedly and leaf-004 a configured remote that is not connected).",
  remediation:
    "Read the reason. Slow consumer: make the client read faster or move it to a JetStream consumer. Stale connection: check the client's host and network, or `ping_interval`/`ping_max`. Authentication or authorization: fix the client's credentials or permissions (the server log names the user). Maximum connections or payload: raise the limit or fix the client. `nats server report connections --state closed` (with `--closed-reason '<reason>'` to narrow it) lists the servers' recent closes.",
  scope: "connection",
  entityType: "connection",
  severity: "info",
  category: "errors",
  optimization: false,
  params: [],
  detailColumns: [
    ...CONNECTION_COLUMNS,
    { name: "reason", type: "VARCHAR", description: "Why the server closed the connection." },
    { name: "stop", type: "TIMESTAMP WITH TIME ZONE", description: "When it closed (the server's clock)." },
    { name: "user", type: "VARCHAR", description: "User the client authenticated as, if any." },
    {
      name: "pending_bytes",
      type: "BIGINT",
      description: "Bytes still waiting to be written to the client when it closed.",
    },
  ],
  sql: `
SELECT c.epoch, c.connection_pk AS entity_pk,
       c.server || ' cid ' || c.cid || coalesce(' (' || nullif(c.name, '') || ')', '') AS entity_name,
       NULL::VARCHAR AS entity_key, c.server, 'info' AS severity,
       c.account, c.name AS client_name, c.ip, c.lang, c.version AS client_version,
       c.reason, c.stop, c.authorized_user AS user, CAST(c.pending_bytes AS BIGINT) AS pending_bytes
FROM hx.closed_connections c
WHERE c.epoch BETWEEN ep_from AND ep_to AND coalesce(c.reason, '') NOT IN ('', 'Client Closed')
  AND coalesce(c.kind, 'Client') = 'Client'`,
};
