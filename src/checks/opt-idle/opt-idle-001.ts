import type { Check } from "../check.ts";

/**
 * A server whose every VARZ sample of the window shows little CPU and few client
 * connections. CPU is VARZ `cpu` (percent of one core) divided by the cores the server sees,
 * as server-003 reads it: 5% of a 16-core machine is most of a core. A server with fewer
 * samples than p_min_samples is not judged: a handful of epochs says nothing about a range.
 */
export const optIdle001: Check = {
  code: "opt-idle-001",
  name: "Underutilized Server",
  description:
    "The server stayed near idle over the whole range: in every sample its CPU use per core stayed at or below the threshold and it held no more client connections than the threshold. A cluster member that carries next to nothing still costs a machine; it may be a spare kept on purpose, or a server that clients and JetStream assets never reach (wrong client URLs, placement tags that exclude it).",
  remediation:
    "Check whether the server is meant to be idle. If clients should reach it, make sure their server lists or DNS include it and that it is advertised (`cluster { no_advertise }` off). If JetStream assets should be placed on it, look at its `server_tags` and the streams' placement (`nats server report jetstream`, `nats stream info`). Otherwise consider a smaller machine, or fewer servers: keep an odd number of JetStream servers (3 or 5) for the meta group, and move assets off a server before removing it (`nats server raft peer-remove`).",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_max_cpu_percent",
      default: 5,
      description: "Highest CPU use per core, in percent, that still counts as idle.",
    },
    {
      name: "p_max_connections",
      default: 10,
      description: "Most client connections that still count as idle.",
    },
    {
      name: "p_min_samples",
      default: 5,
      description: "Epochs with the server's VARZ the range must hold before the server is judged.",
    },
  ],
  detailColumns: [
    { name: "samples", type: "BIGINT", description: "Epochs of the range with the server's VARZ." },
    {
      name: "max_cpu_per_core_percent",
      type: "DOUBLE",
      description: "Highest CPU use per core over the range, percent.",
    },
    {
      name: "max_connections",
      type: "BIGINT",
      description: "Most client connections the server held over the range.",
    },
  ],
  sql: `
WITH idle AS (
  SELECT * FROM (
    SELECT s.server_pk, max(s.epoch) AS epoch, count(*) AS samples,
           max(CASE WHEN s.cores > 0 THEN s.cpu / s.cores ELSE s.cpu END) AS max_cpu,
           max(s.connections) AS max_connections
    FROM hx.server_stats s
    WHERE s.epoch BETWEEN ep_from AND ep_to AND s.cpu IS NOT NULL AND s.connections IS NOT NULL
    GROUP BY s.server_pk)
  WHERE samples >= p_min_samples AND max_cpu <= p_max_cpu_percent AND max_connections <= p_max_connections
)
SELECT d.epoch, d.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'info' AS severity, CAST(d.samples AS BIGINT) AS samples,
       CAST(d.max_cpu AS DOUBLE) AS max_cpu_per_core_percent, CAST(d.max_connections AS BIGINT) AS max_connections
FROM idle d
JOIN hx.server_ident i ON i.server_pk = d.server_pk`,
};
