import type { Check } from "../check.ts";
import { CONNECTION_COLUMNS, connectionSql } from "./conn-sql.ts";

export const conn002: Check = {
  code: "conn-002",
  name: "Client Pending Pressure",
  description:
    "The server holds more than the threshold of bytes it could not yet write to a client connection (CONNZ `pending_bytes`): the client, or the network to it, does not keep up with the messages its subscriptions receive. When the pending buffer reaches `max_pending` (64 MiB by default) or a write takes longer than `write_deadline`, the server drops the client as a slow consumer and its messages are lost.",
  remediation:
    "Find the client: its name, account and address are in the finding; `nats server report connections --account <account>` lists the account's connections. Make it read faster (handle messages asynchronously, do not block in callbacks), spread the load over a queue group, narrow its subscriptions, or for bulk delivery use a JetStream consumer with flow control. Check the client's network and host. Raise `max_pending` only for a client known to catch up.",
  scope: "connection",
  entityType: "connection",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    { name: "p_pending_mib", default: 1, description: "Fires when more than this many MiB are pending." },
  ],
  detailColumns: [
    ...CONNECTION_COLUMNS,
    { name: "pending_bytes", type: "BIGINT", description: "Bytes waiting to be written to the client." },
    { name: "threshold_bytes", type: "BIGINT", description: "Threshold in force, bytes." },
    { name: "subscriptions", type: "BIGINT", description: "Subscriptions of the connection." },
  ],
  sql: connectionSql(
    "warning",
    "CAST(c.pending_bytes AS BIGINT) AS pending_bytes, CAST(p_pending_mib * 1048576 AS BIGINT) AS threshold_bytes, CAST(c.subscriptions AS BIGINT) AS subscriptions",
    "c.pending_bytes > p_pending_mib * 1048576",
  ),
};
