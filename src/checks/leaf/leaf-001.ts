import type { Check } from "../check.ts";
import { LEAFNODE_COLUMNS, leafnodeSql } from "./leaf-sql.ts";

export const leaf001: Check = {
  code: "leaf-001",
  name: "Leafnode Name Whitespace",
  description:
    "The server name of the other end of a leafnode connection (LEAFZ `name`) contains whitespace. Server names identify servers in monitoring, in JetStream placement and in the meta group; a leaf server whose `server_name` carries a stray space is listed under a name no one types, and newer nats-server releases refuse names with spaces.",
  remediation:
    "Correct `server_name` in the leaf server's configuration (no spaces) and restart it; the finding names the hub or leaf server that reported the connection and the account. `nats server report leafnodes` (or LEAFZ) lists the leafnode connections by name.",
  scope: "leafnode connection",
  entityType: "leafnode",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    ...LEAFNODE_COLUMNS,
    { name: "name", type: "VARCHAR", description: "The remote server name, quoted as reported." },
  ],
  minServerVersion: "2.9.15",
  sql: leafnodeSql("'warning'", `'"' || l.name || '"' AS name`, "regexp_matches(l.name, '\\s')"),
};
