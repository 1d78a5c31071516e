import type { Check } from "../check.ts";

export const server003: Check = {
  code: "server-003",
  name: "High CPU Usage",
  description:
    "The nats-server process uses a large share of the CPU it has: VARZ `cpu` (percent of one core, so up to 100 × cores) divided by the cores the server sees is at or above the threshold. A server that is short of CPU answers late, delays route and JetStream raft traffic, and turns clients into slow consumers.",
  remediation:
    "Find what drives the load: message rates (`nats server list`, `nats server report connections --sort in-msgs`), many subscriptions with wildcards, JetStream work (`nats server report jetstream`), TLS handshakes after a reconnect storm. Spread the clients or the JetStream assets over more servers, give the server more cores (and check GOMAXPROCS against a container's CPU limit), or move other processes off its host.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    {
      name: "p_cpu_percent",
      default: 90,
      description: "CPU use per core, in percent, at or above which the check fires.",
    },
  ],
  detailColumns: [
    {
      name: "cpu_per_core_percent",
      type: "DOUBLE",
      description: "CPU use divided by the cores the server sees, percent.",
    },
    { name: "cpu", type: "DOUBLE", description: "VARZ cpu: percent of one core." },
    { name: "cores", type: "INTEGER", description: "CPU cores the server sees." },
    { name: "threshold_percent", type: "DOUBLE", description: "Threshold in force (p_cpu_percent)." },
  ],
  sql: `
SELECT st.epoch, st.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'warning' AS severity,
       CAST(st.cpu / st.cores AS DOUBLE) AS cpu_per_core_percent, CAST(st.cpu AS DOUBLE) AS cpu,
       CAST(st.cores AS INTEGER) AS cores, CAST(p_cpu_percent AS DOUBLE) AS threshold_percent
FROM hx.server_stats st
JOIN hx.server_ident i ON i.server_pk = st.server_pk
WHERE st.epoch BETWEEN ep_from AND ep_to AND st.cores > 0 AND st.cpu / st.cores >= p_cpu_percent`,
};
