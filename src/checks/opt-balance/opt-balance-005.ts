import type { Check } from "../check.ts";
import { clusterShareSql } from "./cluster-share-sql.ts";

/**
 * JSZ `storage` of each server (file storage used by every stream replica it holds). The
 * cluster's average is over its JetStream servers that answered JSZ at the latest epoch of
 * the window holding the server, the server itself included.
 */
export const optBalance005: Check = {
  code: "opt-balance-005",
  name: "JetStream Storage Skew",
  description:
    "The server stores more than twice the average JetStream file storage of its cluster's JetStream servers. Its disk fills first: once it reaches its max_file_store (or the disk is full) it refuses new messages for the streams it holds, while its peers still have room. Large streams placed on the same servers, R1 streams created on one server, or placement tags that match few servers are the usual causes.",
  remediation:
    "Find the large streams and where their replicas sit: `nats server report jetstream` (storage per server) and `nats stream report` (size and replicas of each stream). Move a replica with `nats stream cluster peer-remove <stream> <server>` (a new replica is placed on another server), bound large streams with `max_bytes` or `max_age` (`nats stream edit <stream> --max-bytes …`), and spread new streams with placement tags that match several servers.",
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
      description: "Fires when the server stores more than this many times its cluster's average.",
    },
    {
      name: "p_min_bytes",
      default: 1073741824,
      description: "JetStream storage the server must use at least, bytes (default 1 GiB).",
    },
  ],
  detailColumns: [
    { name: "cluster", type: "VARCHAR", description: "Cluster of the server." },
    { name: "storage_bytes", type: "BIGINT", description: "JetStream file storage the server uses, bytes." },
    {
      name: "cluster_avg_bytes",
      type: "DOUBLE",
      description: "Average JetStream file storage per JetStream server of the cluster, bytes.",
    },
    { name: "ratio", type: "DOUBLE", description: "Storage of the server over the cluster's average." },
    {
      name: "cluster_servers",
      type: "INTEGER",
      description: "JetStream servers of the cluster the average is over.",
    },
  ],
  sql: clusterShareSql({
    figure: "js_storage",
    as: "storage_bytes",
    avgAs: "cluster_avg_bytes",
    jetstream: true,
    minServers: "2",
    minFigure: "p_min_bytes",
  }),
};
