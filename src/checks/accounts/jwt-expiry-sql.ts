/**
 * What accounts-007 and accounts-008 share: each account's state in each epoch of the
 * window (hx.account_states `s`), with its configuration then (`o`), and the columns naming
 * its JWT's expiry and the servers holding it.
 */
import type { DetailColumn } from "../check.ts";

/** The fixed columns of an account's finding, for a row `s` of hx.account_states. */
export const STATE_ENTITY = `s.epoch, s.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), s.account) AS entity_name,
       NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server`;

export const STATE_ROWS = `FROM checks.epochs_in(ep_from, ep_to) e
JOIN hx.account_states s ON s.epoch = e.epoch
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = s.account_pk AND s.epoch >= o.epoch`;

/** account, jwt_expires, then the detail columns of each check, then servers. */
export const ACCOUNT_COLUMN: DetailColumn = {
  name: "account",
  type: "VARCHAR",
  description: "The account's public key.",
};
export const EXPIRES_COLUMN: DetailColumn = {
  name: "jwt_expires",
  type: "TIMESTAMP WITH TIME ZONE",
  description: "When the account JWT expires or expired (its exp claim).",
};
export const SERVERS_COLUMN: DetailColumn = {
  name: "servers",
  type: "VARCHAR[]",
  description: "Servers that hold the account loaded this epoch, sorted.",
};
