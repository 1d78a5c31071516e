import type { Check } from "../check.ts";

export const server011: Check = {
  code: "server-011",
  name: "Connection Count High",
  description:
    "The server holds a large share of the client connections its max_connections allows. Once the limit is reached it refuses new clients with 'maximum connections exceeded', so applications fail to connect or reconnect.",
  remediation:
    "See the connection counts per server with `nats server list` and who holds them with `nats server report connections`, and close leaks or idle clients; spread clients over more servers of the cluster; or raise `max_connections` in the server configuration and reload it (`nats-server --signal reload`).",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 80,
      description: "Fires when connections reach this percentage of max_connections.",
    },
  ],
  detailColumns: [
    { name: "connections", type: "BIGINT", description: "Current client connections (VARZ connections)." },
    {
      name: "max_connections",
      type: "BIGINT",
      description: "Client connection limit (VARZ max_connections).",
    },
    { name: "used_percent", type: "DOUBLE", description: "connections as a percentage of max_connections." },
    { name: "warn_percent", type: "DOUBLE", description: "Threshold in force, percent." },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key,
       s.server, 'warning' AS severity,
       CAST(s.connections AS BIGINT) AS connections,
       CAST(s.max_connections AS BIGINT) AS max_connections,
       CAST(round(100.0 * s.connections / s.max_connections, 2) AS DOUBLE) AS used_percent,
       CAST(p_warn_percent AS DOUBLE) AS warn_percent
FROM hx.servers s
WHERE s.epoch BETWEEN ep_from AND ep_to
  AND s.max_connections > 0
  AND CAST(s.connections AS DOUBLE) * 100 >= CAST(p_warn_percent AS DOUBLE) * s.max_connections`,
};
