/**
 * The shared shape of the per-connection checks: one row per open client connection of
 * hx.connections in the window matching `condition`, named by server, cid and the name the
 * client gave itself, on the server it is connected to.
 */
export function connectionSql(severity: string, columns: string, condition: string): string {
  return `
SELECT c.epoch, c.connection_pk AS entity_pk,
       c.server || ' cid ' || c.cid || coalesce(' (' || nullif(c.name, '') || ')', '') AS entity_name,
       NULL::VARCHAR AS entity_key, c.server, '${severity}' AS severity,
       c.account, c.name AS client_name, c.ip, c.lang, c.version AS client_version, ${columns}
FROM hx.connections c
WHERE c.epoch BETWEEN ep_from AND ep_to AND ${condition}`;
}

/** The detail columns every per-connection check starts with. */
export const CONNECTION_COLUMNS = [
  { name: "account", type: "VARCHAR", description: "Account the connection is bound to." },
  { name: "client_name", type: "VARCHAR", description: "Name the client gave itself, if any." },
  { name: "ip", type: "VARCHAR", description: "Client address." },
  { name: "lang", type: "VARCHAR", description: "Client library language." },
  { name: "client_version", type: "VARCHAR", description: "Client library version." },
] as const;
