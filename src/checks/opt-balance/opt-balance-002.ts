import type { Check } from "../check.ts";
import { clusterShareSql } from "./cluster-share-sql.ts";

/**
 * VARZ `connections` (client connections, not routes, gateways or leafnodes) at the latest
 * epoch of the window holding the server; the cluster's average includes the server itself
 * and is over the servers of the cluster that answered VARZ at that epoch.
 */
export const optBalance002: Check = {
  code: "opt-balance-002",
  name: "Connection Hotspot",
  description:
    "The server carries more than twice the average number of client connections of its cluster's servers. Clients usually reach one server because they were given only its URL, or because a load balancer or DNS entry prefers it: that server spends more memory and CPU on them than its peers, is the first to reach max_connections, and when it restarts all of them reconnect at once.",
  remediation:
    "See the connections per server with `nats server list` and who they are with `nats server report connections`. Give clients the URLs of every server of the cluster (they pick one at random; nats.go, nats.js and the other official clients also learn the others from the cluster), check the load balancer or DNS entry in front of the cluster, and let long-lived clients spread again by restarting them a few at a time (connections do not move by themselves once made).",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_multiplier",
      default: 2,
      description:
        "Fires when the server has more than this many times its cluster's average of connections.",
    },
    {
      name: "p_min_connections",
      default: 100,
      description: "Client connections the server must carry at least.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "connections", type: "BIGINT", description: "Client connections of the server." },
    {
      name: "cluster_avg_connections",
      type: "DOUBLE",
      description: "Average client connections per server of the cluster.",
    },
    { name: "ratio", type: "DOUBLE", description: "Connections of the server over the cluster's average." },
    { name: "cluster_servers", type: "INTEGER", description: "Servers of the cluster the average is over." },
  ],
  // The averages are computed over every epoch of the window before QUALIFY keeps each
  // server's latest: a server-level scan, small.
  sql: clusterShareSql({
    figure: "connections",
    as: "connections",
    avgAs: "cluster_avg_connections",
    jetstream: false,
    minServers: "2",
    minFigure: "p_min_connections",
  }),
};
