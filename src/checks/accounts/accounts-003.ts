import type { Check } from "../check.ts";
import { IMPORT_ENTITY, IMPORT_ROWS, IMPORT_SOURCE_COLUMNS } from "./import-sql.ts";

/**
 * An import some server holding the importing account does not have active: nats-server
 * 2.9.10 leaves an import it refuses out of the account's import list (the JWT still
 * declares it) and marks one it held and then lost (its activation token expired) invalid;
 * the fold records both as inactive_servers. The cause is read from what the fold kept, in
 * this order: no server has the exporting account, it has no export covering the subject,
 * the import has no activation token and every export covering it needs one, the token has
 * expired, the token is signed by a key the exporter's JWT no longer lists; else the server
 * refused it for another reason (a duplicate import, a token for another subject or
 * account). An importing account whose JWT fails
 * validation altogether is never loaded and has no detail: server-016 covers it.
 */
export const accounts003: Check = {
  code: "accounts-003",
  name: "Inactive JWT Import",
  description:
    "An import of the account is not active on the servers named: the account JWT declares it, but the server refused it or dropped it. Nothing the exporting account publishes on the subject reaches the account (a stream import), or the account's requests on it find no responder (a service import). The detail names the cause: the exporting account is missing, it exports no matching subject, a private export is imported without an activation token, the activation token has expired, or the token was signed by a key the exporter no longer holds (a rotated signing key).",
  remediation:
    "See the import and its token: `nsc describe account <account>` (imports) and `nsc describe account <exporter>` (exports, signing keys). For a missing or expired token, have the exporter generate one (`nsc generate activation --account <exporter> --target-account <account> --subject <subject>`) and import it again (`nsc add import --token <file>`); for a rotated key, generate the token with a current signing key; for a missing exporter or export, push the exporter's JWT (`nsc push -a <exporter>`) or fix the subject. Then `nsc push -a <account>`.",
  scope: "account (import)",
  entityType: "import",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    ...IMPORT_SOURCE_COLUMNS,
    { name: "type", type: "VARCHAR", description: "stream or service." },
    {
      name: "cause",
      type: "VARCHAR",
      description:
        "exporter missing, no matching export, no activation token, expired token, token signed by a rotated key, or refused by the server.",
    },
    {
      name: "token_expires",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "When the activation token expires or expired; NULL when it has none or no expiry.",
    },
    { name: "servers", type: "VARCHAR[]", description: "Servers without the import active, sorted." },
  ],
  sql: `
SELECT ${IMPORT_ENTITY},
       NULL::VARCHAR AS server, 'critical' AS severity, m.exporter, m.subject, m.type,
       CASE WHEN NOT m.exporter_known THEN 'exporter missing'
            WHEN NOT m.export_found THEN 'no matching export'
            WHEN m.declared AND NOT m.token AND m.export_token_req THEN 'no activation token'
            WHEN m.token_expires <= m.epoch THEN 'expired token'
            WHEN NOT m.token_signer_known THEN 'token signed by a rotated key'
            ELSE 'refused by the server' END AS cause,
       m.token_expires, CAST(m.inactive_servers AS VARCHAR[]) AS servers
${IMPORT_ROWS}
WHERE len(m.inactive_servers) > 0`,
};
