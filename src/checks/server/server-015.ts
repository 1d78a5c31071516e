import type { Check } from "../check.ts";
import { HEALTHZ_PROBLEMS_CTE } from "./healthz-problems.ts";

export const server015: Check = {
  code: "server-015",
  name: "Stream Recovery Failure",
  description:
    "The server's health endpoint reports streams or consumers it holds that are not healthy: not recovered from disk, or replicas not current with their raft group. Until they recover, those replicas cannot serve or take over leadership, and a stream whose other replicas fail loses availability or data.",
  remediation:
    "The detail names each stream ('account > stream') or consumer. Check them with `nats stream info <stream>` / `nats consumer info <stream> <consumer>` (replica state, lag, leader) and the server log for recovery or raft errors (corrupt or missing files in the store directory, out of disk). A replica that stays behind can be rebuilt: `nats stream cluster peer-remove <stream> <server>` lets JetStream place a fresh copy; a lone R1 stream that cannot be recovered needs restoring from backup (`nats stream restore`).",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "healthz_status", type: "VARCHAR", description: "HEALTHZ status: error or unavailable." },
    {
      name: "streams_failing",
      type: "INTEGER",
      description: "Stream problems reported (2.9 reports only the first problem of any kind).",
    },
    { name: "consumers_failing", type: "INTEGER", description: "Consumer problems reported." },
    {
      name: "errors",
      type: "VARCHAR[]",
      description:
        "The stream and consumer problems HEALTHZ reports, naming each asset as account > stream > consumer.",
    },
  ],
  sql: `
WITH ${HEALTHZ_PROBLEMS_CTE.trim()}
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'critical' AS severity,
       any_value(healthz_status) AS healthz_status,
       CAST(count(*) FILTER (WHERE kind = 'STREAM') AS INTEGER) AS streams_failing,
       CAST(count(*) FILTER (WHERE kind = 'CONSUMER') AS INTEGER) AS consumers_failing,
       list(problem ORDER BY problem) AS errors
FROM healthz_problems
WHERE kind IN ('STREAM', 'CONSUMER')
GROUP BY epoch, server_pk, server`,
};
