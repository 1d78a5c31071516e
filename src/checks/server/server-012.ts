import type { Check } from "../check.ts";
import { counterIncreaseSql } from "./counter-increase.ts";

export const server012: Check = {
  code: "server-012",
  name: "Stale Connections",
  description:
    "The server closed connections as stale since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered): the peer did not answer the server's pings (ping_interval × ping_max) and was dropped. Clients that vanish without closing, half-open TCP connections or an overloaded network or peer cause this; for routes, gateways and leafnodes it means the links between servers are breaking.",
  remediation:
    "Check the server log for 'Stale Client Connection - Closed' (or Route/Gateway/Leafnode) lines to see which connections and peers; check the network path (firewalls and load balancers that drop idle TCP sessions, packet loss) and the health of the clients or servers at the other end. If the clients are merely slow to answer over a slow link, raise `ping_interval` / `ping_max` in the server configuration.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "new_stale_connections",
      type: "BIGINT",
      description:
        "Stale connections closed since the previous epoch (the whole count when the server restarted in between).",
    },
    {
      name: "stale_connections",
      type: "BIGINT",
      description: "Stale connections closed since the server started (VARZ stale_connections).",
    },
  ],
  minServerVersion: "2.12.0",
  sql: counterIncreaseSql("stale_connections", "new_stale_connections", "2.12.0"),
};
