import type { Check } from "../check.ts";

/**
 * Boot generations are the distinct VARZ start times the server reported in the hour up to
 * each epoch; the first of them is the start the hour began with, so the restarts are one
 * fewer. The check fires when there are more than p_max_restarts restarts, and only in epochs
 * the server answered (a server down in its loop is scrape-001's).
 */
export const server009: Check = {
  code: "server-009",
  name: "Server Crash Loop",
  description:
    "The server restarted more than p_max_restarts times within the last hour (its distinct start times in the hour, less the first): its process keeps starting again, a crash loop or a supervisor restarting it over and over. Each restart drops all its connections and makes its JetStream replicas catch up, and the cluster keeps electing new leaders for the assets it led.",
  remediation:
    "Stop the loop before looking further: check the supervisor's restart count (`systemctl status nats-server`, `kubectl get pod` restarts and `kubectl describe pod` for OOMKilled or failing liveness probes). Read the log of each short-lived run for the panic or fatal error that ends it (a bad configuration after a reload, a damaged JetStream store, memory limits too low for the store's index). A liveness probe on `/healthz` that kills a server still restoring its streams causes exactly this: use a startup probe or a longer grace period.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [
    {
      name: "p_max_restarts",
      default: 2,
      description:
        "Restarts within an hour above which the check fires: distinct start times seen in the hour, less the first (the start the hour began with).",
    },
  ],
  detailColumns: [
    {
      name: "start_times",
      type: "BIGINT",
      description: "Distinct start times the server reported within the hour up to this epoch.",
    },
    {
      name: "restarts",
      type: "BIGINT",
      description: "Restarts within the hour up to this epoch: start_times - 1.",
    },
    { name: "max_restarts", type: "BIGINT", description: "Threshold in force (p_max_restarts)." },
    { name: "start", type: "TIMESTAMP WITH TIME ZONE", description: "The latest start time." },
    {
      name: "starts",
      type: "TIMESTAMP WITH TIME ZONE[]",
      description: "The distinct start times seen within the hour, oldest first.",
    },
  ],
  sql: `
WITH e AS (
  SELECT st.epoch, st.server_pk
  FROM hx.server_stats st
  WHERE st.epoch BETWEEN ep_from AND ep_to AND st.start IS NOT NULL
),
h AS (
  SELECT st.epoch, st.server_pk, st.start
  FROM hx.server_stats st
  WHERE st.epoch > ep_from - INTERVAL 1 HOUR AND st.epoch <= ep_to AND st.start IS NOT NULL
),
g AS (
  SELECT e.epoch, e.server_pk, count(DISTINCT h.start) AS n, max(h.start) AS start,
         list(DISTINCT h.start ORDER BY h.start) AS starts
  FROM e JOIN h ON h.server_pk = e.server_pk AND h.epoch > e.epoch - INTERVAL 1 HOUR AND h.epoch <= e.epoch
  GROUP BY e.epoch, e.server_pk
)
SELECT g.epoch, g.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'critical' AS severity, CAST(g.n AS BIGINT) AS start_times,
       CAST(g.n - 1 AS BIGINT) AS restarts, CAST(p_max_restarts AS BIGINT) AS max_restarts, g.start, g.starts
FROM g JOIN hx.server_ident i ON i.server_pk = g.server_pk
WHERE g.n - 1 > p_max_restarts`,
};
