/**
 * The shared shape of the leafnode connection checks: one row per leafnode connection of
 * hx.leafnodes in the window matching `condition`, from the server at the end reporting it
 * (hub and leaf both list the connection, and each end's figures are its own).
 */
export function leafnodeSql(severity: string, columns: string, condition: string): string {
  return `
SELECT l.epoch, l.leafnode_pk AS entity_pk, l.server || ' - ' || l.remote || ' (' || l.account || ')' AS entity_name,
       NULL::VARCHAR AS entity_key, l.server, ${severity} AS severity, l.account, l.remote, ${columns}
FROM hx.leafnodes l
WHERE l.epoch BETWEEN ep_from AND ep_to AND ${condition}`;
}

/** The detail columns every leafnode connection check starts with. */
export const LEAFNODE_COLUMNS = [
  { name: "account", type: "VARCHAR", description: "Local account the connection is bound to." },
  {
    name: "remote",
    type: "VARCHAR",
    description: "The other end: its server name (2.9.15+), else its IP address.",
  },
] as const;
