import type { Check } from "../check.ts";
import { CONSUMER_NAME, MAYBE_DOWN, replicaJoins, replicasCte } from "./consumer-sql.ts";

export const consumer001: Check = {
  code: "consumer-001",
  name: "Consumer Replica Offline",
  description:
    "A replica of a replicated consumer is offline: its leader flags it offline (its server shut down, or was given up for lost), or no longer calls it current while its server does not answer (a crash or a network partition, which nats-server itself flags offline only minutes later). The consumer keeps working while a quorum of replicas is online, but with less redundancy, and the replica has to catch up (or be rebuilt from a snapshot) when its server returns.",
  remediation:
    "Find out why the server named in the finding is down or unreachable (`nats server list`, its log, its routes with `nats server report routes`) and bring it back; the replica catches up by itself once it rejoins. If the server is gone for good, remove it from the JetStream cluster with `nats server raft peer-remove <server>`, so that its replicas are placed on the remaining servers.",
  scope: "consumer replica",
  entityType: "consumer_replica",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "leader", type: "VARCHAR", description: "Consumer leader whose reply reports the replica." },
    {
      name: "offline_reported",
      type: "BOOLEAN",
      description:
        "Whether the leader flags the replica offline. False when that is inferred: the leader no longer calls it current and its server did not answer this epoch (nats-server flags a crashed server offline only minutes later).",
    },
    {
      name: "active_ns",
      type: "BIGINT",
      description: "Nanoseconds since the leader last heard from the replica, as the leader reports it.",
    },
    {
      name: "replicas_down",
      type: "INTEGER",
      description: "Replicas of this consumer that are down in this epoch, this one included.",
    },
  ],
  // Rows for the replica come from the leader's cluster.replicas[]: its own server usually
  // did not answer, and only the leader's view says whether it is online.
  sql: `
WITH ${replicasCte(MAYBE_DOWN)},
down AS (
  SELECT r.*, count(*) OVER (PARTITION BY r.epoch, r.consumer_pk) AS replicas_down
  FROM replicas r
  WHERE r.down
)
SELECT r.epoch, r.consumer_replica_pk AS entity_pk, ${CONSUMER_NAME} || '@' || r.server AS entity_name,
       NULL::VARCHAR AS entity_key, r.server, 'critical' AS severity, l.name AS leader,
       CAST(coalesce(r.offline, false) AS BOOLEAN) AS offline_reported, CAST(r.active_ns AS BIGINT) AS active_ns,
       CAST(r.replicas_down AS INTEGER) AS replicas_down
FROM down r
${replicaJoins("r")}`,
};
