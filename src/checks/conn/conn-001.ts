import type { Check } from "../check.ts";
import { CONNECTION_COLUMNS, connectionSql } from "./conn-sql.ts";

export const conn001: Check = {
  code: "conn-001",
  name: "High Client RTT",
  description:
    "The round-trip time the server last measured to a client connection (its PING/PONG, CONNZ `rtt`) is high. Every request-reply and every flush of that client waits at least this long, and a client far from its server or on a congested link is the first to fall behind and become a slow consumer.",
  remediation:
    "Find the client: its name, account and address are in the finding; `nats server report connections --account <account>` lists the account's connections. Connect it to a server close to it (another cluster of the super-cluster or a leafnode near the client), look for network congestion or an overloaded client host (a client that is busy answers PINGs late too), and check that the client is not blocked in its own callbacks.",
  scope: "connection",
  entityType: "connection",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    { name: "p_rtt_ms", default: 100, description: "Fires when the RTT is above this many milliseconds." },
  ],
  detailColumns: [
    ...CONNECTION_COLUMNS,
    { name: "rtt_ms", type: "DOUBLE", description: "Round-trip time last measured, milliseconds." },
    { name: "threshold_ms", type: "DOUBLE", description: "Threshold in force, milliseconds." },
  ],
  sql: connectionSql(
    "warning",
    "CAST(c.rtt_ns / 1e6 AS DOUBLE) AS rtt_ms, CAST(p_rtt_ms AS DOUBLE) AS threshold_ms",
    "c.rtt_ns > CAST(p_rtt_ms AS DOUBLE) * 1e6",
  ),
};
