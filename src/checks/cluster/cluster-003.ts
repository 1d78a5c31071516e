import type { Check } from "../check.ts";

export const cluster003: Check = {
  code: "cluster-003",
  name: "High HA Assets",
  description:
    "The server takes part in very many replicated JetStream assets (JSZ `ha_assets`: the raft groups of R>1 streams and consumers it holds a replica of, plus the meta group). Every raft group runs its own heartbeats, elections and write-ahead log, so beyond about a thousand groups per server the CPU, memory and network spent only on keeping them alive grow large, leader elections after a restart take long and the server may miss heartbeats.",
  remediation:
    "See where the assets are: `nats server report jetstream` and `nats stream report`. Lower the replica count of streams that do not need R3 (`nats stream edit <stream> --replicas 1`), remove unused consumers (ephemeral ones with `inactive_threshold`, durable ones with `nats consumer rm`), consolidate many small streams into fewer streams with more subjects, or add servers to the cluster and spread new assets with placement tags.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_count",
      default: 1000,
      description: "Fires when the server holds at least this many replicated assets.",
    },
  ],
  detailColumns: [
    { name: "ha_assets", type: "INTEGER", description: "Replicated assets (raft groups) on the server." },
    { name: "streams", type: "BIGINT", description: "Streams on the server, follower replicas included." },
    {
      name: "consumers",
      type: "BIGINT",
      description: "Consumers on the server, follower replicas included.",
    },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, s.js_ha_assets AS ha_assets, s.js_streams AS streams, s.js_consumers AS consumers
FROM hx.server_stats s
JOIN hx.server_ident i ON i.server_pk = s.server_pk
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.js_ha_assets >= p_warn_count`,
};
