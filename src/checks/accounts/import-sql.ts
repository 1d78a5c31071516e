/**
 * What accounts-003 and accounts-005 share about an import: how a finding names it (within
 * its importing account, so both checks name the same import alike) and the rows they read.
 */
import type { DetailColumn } from "../check.ts";

/** The fixed columns up to entity_key, for a row `m` of hx.account_imports and its account's `o`. */
export const IMPORT_ENTITY = `m.epoch, m.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), m.account) AS entity_name,
       m.type || ' ' || m.subject || ' from ' || m.exporter || coalesce(' to ' || nullif(m.local_subject, ''), '') AS entity_key`;

/**
 * Each import of each epoch of the window (`m`), with its account's configuration then (`o`);
 * not of an account whose JWT expired or was deleted (checks.accounts_gone).
 */
export const IMPORT_ROWS = `FROM checks.epochs_in(ep_from, ep_to) e
JOIN hx.account_imports m ON m.epoch = e.epoch
ANTI JOIN checks.accounts_gone(ep_from, ep_to) g ON g.epoch = m.epoch AND g.account_pk = m.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = m.account_pk AND m.epoch >= o.epoch`;

/** The detail columns naming where an import comes from. */
export const IMPORT_SOURCE_COLUMNS: DetailColumn[] = [
  {
    name: "exporter",
    type: "VARCHAR",
    description: "Exporting account (its public key in operator mode).",
  },
  { name: "subject", type: "VARCHAR", description: "Subject imported, as the exporter names it." },
];
