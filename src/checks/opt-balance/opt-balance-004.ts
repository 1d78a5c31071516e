import type { Check } from "../check.ts";
import { clusterShareSql } from "./cluster-share-sql.ts";

/**
 * JSZ `streams` of each server: the streams it holds a replica of, leader or follower, R1
 * included. The cluster's average is over its JetStream servers that answered JSZ at the
 * latest epoch of the window holding the server.
 */
export const optBalance004: Check = {
  code: "opt-balance-004",
  name: "Stream Replica Count Imbalance",
  description:
    "The server holds replicas of far more streams than the average JetStream server of its cluster. This is placement skew, not only leadership: every replica stores the stream's messages, writes them to disk and takes part in its raft group, so the server uses more disk, memory and CPU than its peers, reaches its JetStream limits first, and loses the most when it goes down. It comes from placement tags or a placement cluster that fit few servers, from servers added after the streams were made, or from R1 streams created while the other servers were down.",
  remediation:
    "Compare the servers with `nats server report jetstream` (streams and storage per server) and see where each stream's replicas sit with `nats stream report`. Move replicas off the server with `nats stream cluster peer-remove <stream> <server>` (the meta leader places a new replica on another server, which copies the stream), spread future streams with placement tags that match several servers, and lower the replica count of streams that do not need R3 (`nats stream edit <stream> --replicas 1`).",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_multiplier",
      default: 1.5,
      description:
        "Fires when the server holds more than this many times its cluster's average of stream replicas.",
    },
    {
      name: "p_min_servers",
      default: 3,
      description: "JetStream servers the cluster needs for its average to mean anything.",
    },
    {
      name: "p_min_replicas",
      default: 10,
      description: "Stream replicas the server must hold at least.",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    {
      name: "stream_replicas",
      type: "BIGINT",
      description: "Streams the server holds a replica of (JSZ streams, followers included).",
    },
    {
      name: "cluster_avg_replicas",
      type: "DOUBLE",
      description: "Average stream replicas per JetStream server of the cluster.",
    },
    {
      name: "ratio",
      type: "DOUBLE",
      description: "Stream replicas of the server over the cluster's average.",
    },
    {
      name: "cluster_servers",
      type: "INTEGER",
      description: "JetStream servers of the cluster the average is over.",
    },
  ],
  sql: clusterShareSql({
    figure: "js_streams",
    as: "stream_replicas",
    avgAs: "cluster_avg_replicas",
    jetstream: true,
    minServers: "p_min_servers",
    minFigure: "p_min_replicas",
  }),
};
