import type { Check } from "../check.ts";
import { CONSUMER_NAME, replicaJoins, replicasCte } from "./consumer-sql.ts";

export const consumer002: Check = {
  code: "consumer-002",
  name: "Consumer Replica Lag",
  description:
    "An online follower replica of a consumer trails its leader by more than the allowed number of raft operations (deliveries and acknowledgements not yet applied). A lagging replica is not a safe failover target: if the leader is lost now, the new leader may redeliver messages that were already acknowledged.",
  remediation:
    "Check the health of the server holding the replica: disk latency, CPU, memory and its routes to the leader (`nats server report jetstream`, `nats server report routes`). A replica that restarted recently usually catches up on its own; one that stays behind points at a slow disk or a saturated route. `nats consumer info <stream> <consumer>` shows each replica's lag as the leader sees it.",
  scope: "consumer replica",
  entityType: "consumer_replica",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [
    {
      name: "p_max_lag",
      default: 1000,
      description: "Raft operations an online replica may trail its leader by before the check fires.",
    },
  ],
  detailColumns: [
    { name: "leader", type: "VARCHAR", description: "Consumer leader whose reply reports the lag." },
    { name: "lag", type: "BIGINT", description: "Raft operations the replica trails the leader by." },
    { name: "max_lag", type: "BIGINT", description: "Threshold in force (p_max_lag)." },
    { name: "current", type: "BOOLEAN", description: "Whether the leader considers the replica current." },
    {
      name: "active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the leader last heard from the replica.",
    },
  ],
  // Down replicas are consumer-001's; their lag is frozen at whatever it was when they left.
  sql: `
WITH ${replicasCte("r.offline = false AND NOT r.is_leader AND r.lag > p_max_lag")}
SELECT r.epoch, r.consumer_replica_pk AS entity_pk, ${CONSUMER_NAME} || '@' || r.server AS entity_name,
       NULL::VARCHAR AS entity_key, r.server, 'warning' AS severity, l.name AS leader,
       CAST(r.lag AS BIGINT) AS lag, CAST(p_max_lag AS BIGINT) AS max_lag,
       CAST(r.current AS BOOLEAN) AS current, CAST(r.active_ns AS BIGINT) AS active_ns
FROM replicas r
${replicaJoins("r")}
WHERE NOT r.down`,
};
