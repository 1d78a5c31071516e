import type { Check } from "../check.ts";
import { HEALTHZ_PROBLEMS_CTE } from "./healthz-problems.ts";

export const server014: Check = {
  code: "server-014",
  name: "JetStream Subsystem Unhealthy",
  description:
    "The server's health endpoint reports a problem with JetStream itself rather than with one stream: no contact with a meta leader, not current with the meta leader, the meta layer still recovering or not running. While it lasts the server cannot take part in stream and consumer placement or answer the JetStream API reliably.",
  remediation:
    "Read the error in the detail; check `nats server report jetstream` for the meta leader and which peers are offline or lagging, and the server log for raft and 'JetStream' errors. Make sure a majority of the meta group's servers run and can reach each other over routes (and gateways); a server stuck recovering may need more time or a restart. If the meta group lost quorum for good, see `nats server raft peer-remove` to remove dead peers.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "healthz_status", type: "VARCHAR", description: "HEALTHZ status: error or unavailable." },
    {
      name: "errors",
      type: "VARCHAR[]",
      description: "The JetStream-level problems HEALTHZ reports, as the server words them.",
    },
  ],
  sql: `
WITH ${HEALTHZ_PROBLEMS_CTE.trim()}
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'critical' AS severity,
       any_value(healthz_status) AS healthz_status,
       list(problem ORDER BY problem) AS errors
FROM healthz_problems
WHERE kind = 'JETSTREAM'
GROUP BY epoch, server_pk, server`,
};
