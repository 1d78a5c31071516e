import type { Check } from "../check.ts";
import { HEALTHZ_PROBLEMS_CTE } from "./healthz-problems.ts";

export const server016: Check = {
  code: "server-016",
  name: "Account Resolution Failure",
  description:
    "The server's health endpoint reports a JetStream account it could not resolve: the account's JWT could not be fetched or loaded from the resolver, so the server cannot load that account's streams and consumers and its clients cannot use them here.",
  remediation:
    "The detail names the account. Check the account resolver configuration (`resolver` block: full/cache resolver directory, or the URL resolver) and that the account JWT is present and valid: `nats server request accounts` (ACCOUNTZ) and `nsc describe account <account>`; push it again with `nsc push -a <account>`. The server log shows why the lookup failed.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "healthz_status", type: "VARCHAR", description: "HEALTHZ status: error or unavailable." },
    {
      name: "errors",
      type: "VARCHAR[]",
      description: "The account problems HEALTHZ reports, naming each account.",
    },
  ],
  sql: `
WITH ${HEALTHZ_PROBLEMS_CTE.trim()}
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'warning' AS severity,
       any_value(healthz_status) AS healthz_status,
       list(problem ORDER BY problem) AS errors
FROM healthz_problems
WHERE kind = 'ACCOUNT'
GROUP BY epoch, server_pk, server`,
};
