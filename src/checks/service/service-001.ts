import type { Check } from "../check.ts";

/**
 * The instances of one micro service (an account's service name) that answered this epoch
 * report more than one version. A service is named within its account, so the finding's
 * entity is the account and its key the service name. Client languages are not compared:
 * `$SRV.INFO` does not report one (ADR-32), and nothing links an instance to its connection.
 */
export const service001: Check = {
  code: "service-001",
  name: "Service Version Mismatch",
  description:
    "Instances of one NATS micro service report different versions in `$SRV.INFO`. Requests to the service go to any instance of its queue group, so callers get answers from different code: behaviour and response formats differ from one request to the next. Expected for the length of a rolling deployment; a mismatch that stays means a deployment stopped halfway or an old instance was left running. Only versions are compared: `$SRV.INFO` does not say which client language an instance is written in.",
  remediation:
    "List the instances and their versions: `nats micro info <service>` (or `nats micro ls`) in the service's account. Finish or roll back the deployment, and stop the instances left on the old version (the instance id in `nats micro info` and its connection in `nats server report connections` tell you where it runs).",
  scope: "service (NATS micro)",
  entityType: "service",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Account the service runs in." },
    { name: "service", type: "VARCHAR", description: "Service name." },
    { name: "versions", type: "VARCHAR[]", description: "Versions the instances report, sorted." },
    { name: "instances", type: "BIGINT", description: "Instances of the service this epoch." },
  ],
  sql: `
WITH per_service AS (
  SELECT s.epoch, s.account, s.service, list_sort(list(DISTINCT s.version)) AS versions, count(*) AS instances
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.services s ON s.epoch = e.epoch
  WHERE s.version IS NOT NULL
  GROUP BY s.epoch, s.account, s.service
)
SELECT p.epoch, coalesce(a.account_pk, 0) AS entity_pk, p.service || ' (' || p.account || ')' AS entity_name,
       p.service AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       p.account, p.service, CAST(p.versions AS VARCHAR[]) AS versions, CAST(p.instances AS BIGINT) AS instances
FROM per_service p LEFT JOIN hx.account_ident a ON a.name = p.account
WHERE len(p.versions) > 1`,
};
