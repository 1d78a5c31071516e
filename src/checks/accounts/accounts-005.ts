import type { Check } from "../check.ts";
import { IMPORT_ENTITY, IMPORT_ROWS, IMPORT_SOURCE_COLUMNS } from "./import-sql.ts";

/**
 * An active stream import (no server holding the importing account has it inactive) that
 * nothing in the importing account would receive: no client subscription (CONNZ) and no
 * stream subject (JSZ) of the account overlaps its local subject, as the fold counts them.
 * The fold's index is per account, so the catalogue's cost note (an anti-join of every
 * import with every subscription) does not arise here. Service imports are left out: their
 * subscribers are in the exporting account. Subscribers on the far side of a leafnode
 * connection bound to the account are not in CONNZ and are not counted.
 */
export const accounts005: Check = {
  code: "accounts-005",
  name: "No Subscription Interest",
  description:
    "The account imports a stream, and no client of the account subscribes to its subject and no stream of the account captures it. The servers forward the exporter's messages into the account for nothing; or the subscribers use another subject than the import maps to (a local subject or prefix they do not know of). Subscribers behind a leafnode connection of the account are not seen: check the leafnode's side before removing the import.",
  remediation:
    "See the import's local subject (`nsc describe account <account>`) and the account's subscriptions (`nats server report connections --account <account> --subscriptions`). Remove an import nobody uses (`nsc delete import --account <account> --subject <subject>`, then `nsc push`), or point the subscribers (or a stream's subjects) at the import's local subject.",
  scope: "account (import)",
  entityType: "import",
  severity: "info",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    ...IMPORT_SOURCE_COLUMNS,
    {
      name: "local_subject",
      type: "VARCHAR",
      description: "Subject the messages arrive on in the account (the imported subject when not mapped).",
    },
  ],
  sql: `
SELECT ${IMPORT_ENTITY},
       NULL::VARCHAR AS server, 'info' AS severity, m.exporter, m.subject,
       coalesce(nullif(m.local_subject, ''), m.subject) AS local_subject
${IMPORT_ROWS}
WHERE m.type = 'stream' AND len(m.inactive_servers) = 0 AND m.servers > 0 AND m.subscribers = 0`,
};
