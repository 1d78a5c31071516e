import type { Check } from "../check.ts";
import { LEAFNODE_COLUMNS, leafnodeSql } from "./leaf-sql.ts";

export const leaf002: Check = {
  code: "leaf-002",
  name: "High Leaf RTT",
  description:
    "The round-trip time last measured on a leafnode connection (LEAFZ `rtt`) is high. Everything the leaf's clients exchange with the hub (requests, replies, JetStream API calls across the leafnode, interest updates) pays it, and a slow link makes the leaf's interest sync and reconnects slow.",
  remediation:
    "Compare with the expected latency between the leaf's site and the hub: `nats server report leafnodes`. Look for network congestion or packet loss on the link; connect the leaf to the nearest hub cluster (`leafnodes { remotes: [{ urls: [...] }] }`); keep latency-sensitive traffic local to the leaf (local subscribers, a JetStream domain on the leaf).",
  scope: "leafnode connection",
  entityType: "leafnode",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    { name: "p_rtt_ms", default: 100, description: "Fires when the RTT is above this many milliseconds." },
  ],
  detailColumns: [
    ...LEAFNODE_COLUMNS,
    { name: "rtt_ms", type: "DOUBLE", description: "Round-trip time last measured, milliseconds." },
    { name: "threshold_ms", type: "DOUBLE", description: "Threshold in force, milliseconds." },
  ],
  sql: leafnodeSql(
    "'warning'",
    "CAST(l.rtt_ns / 1e6 AS DOUBLE) AS rtt_ms, CAST(p_rtt_ms AS DOUBLE) AS threshold_ms",
    "l.rtt_ns > CAST(p_rtt_ms AS DOUBLE) * 1e6",
  ),
};
