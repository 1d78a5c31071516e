import type { Check } from "../check.ts";

/**
 * The fold counts, per export, the accounts with an import of the same type from the
 * exporting account whose subject overlaps the export's (wildcards matched token by token:
 * `orders.eu.*` imports from `orders.>`). Only accounts some server has in detail are seen:
 * in operator mode a server loads an account when one of its users connects (and loads the
 * exporters it imports from), so an importer with no client anywhere is not counted. The
 * system account's exports are the server's own and are left out.
 */
export const accounts004: Check = {
  code: "accounts-004",
  name: "Orphaned Export",
  description:
    "No account imports this export: no account the servers hold has an import of the same type from this account on an overlapping subject (wildcards matched token by token). The export exposes subjects nobody uses, or an importer's subject does not match it (a typo, a renamed subject), or the importers are accounts with no clients connected anywhere (in operator mode a server only loads accounts in use).",
  remediation:
    "See who should import it: `nsc describe account <account>` (exports) and the importers' `nsc describe account <importer>`. Remove an export nobody needs (`nsc delete export --account <account> --subject <subject>`), or fix the importer's subject to match (`nsc edit import` / `nsc add import`), then `nsc push`. In server configuration, edit the account's `exports` and the importers' `imports`.",
  scope: "account (export)",
  entityType: "export",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "subject", type: "VARCHAR", description: "Exported subject." },
    { name: "type", type: "VARCHAR", description: "stream or service." },
    {
      name: "token_req",
      type: "BOOLEAN",
      description: "Whether the export is private (needs an activation token).",
    },
    { name: "servers", type: "INTEGER", description: "Servers listing the export." },
  ],
  sql: `
SELECT x.epoch, x.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), x.account) AS entity_name,
       x.type || ' ' || x.subject AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       x.subject, x.type, x.token_req, x.servers
FROM checks.epochs_in(ep_from, ep_to) e
JOIN hx.account_exports x ON x.epoch = e.epoch
ANTI JOIN checks.accounts_gone(ep_from, ep_to) g ON g.epoch = x.epoch AND g.account_pk = x.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = x.account_pk AND x.epoch >= o.epoch
WHERE x.importers = 0 AND NOT coalesce(o.is_system, false) AND x.subject NOT LIKE '$SYS.%'`,
};
