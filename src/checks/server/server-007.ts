import type { Check } from "../check.ts";

export const server007: Check = {
  code: "server-007",
  name: "Authentication Not Required",
  description: "The server accepts client connections without authentication.",
  remediation:
    "Configure authorization (users, nkeys, tokens or an operator with accounts) on every server so that clients must authenticate, then reload the configuration.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "version", type: "VARCHAR", description: "nats-server version." },
    {
      name: "auth_required",
      type: "BOOLEAN",
      description: "Whether clients must authenticate (VARZ auth_required).",
    },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key,
       s.server, 'critical' AS severity, s.version, s.auth_required
FROM hx.servers s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.auth_required = false`,
};
