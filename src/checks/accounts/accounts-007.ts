import type { Check } from "../check.ts";
import {
  ACCOUNT_COLUMN,
  EXPIRES_COLUMN,
  SERVERS_COLUMN,
  STATE_ENTITY,
  STATE_ROWS,
} from "./jwt-expiry-sql.ts";

/**
 * natsmon's own check (the reference catalogue has none on account JWT expiry). The expiry
 * is the exp claim of the JWT the server whose detail was read holds (hx.account_states);
 * a live account whose expiry has passed while the server has not yet flagged it is still
 * reported here, with no time left, until accounts-008 takes it over.
 */
export const accounts007: Check = {
  code: "accounts-007",
  name: "Account JWT Expiring",
  description:
    "natsmon's own check, not in the reference catalogue. The account's JWT expires within the threshold (its `exp` claim, as ACCOUNTZ shows the JWT the servers hold). When it does, the servers disconnect every user of the account and refuse new connections, its exports stop reaching the accounts importing them, and nothing else warns before.",
  remediation:
    "Issue the account a JWT with a later expiry, or none, and push it before this one expires: `nsc edit account <account> --expiry <date>` (or `--expiry 0`), then `nsc push -a <account>`. Check the new expiry with `nats server request accounts <account>` (decoded_jwt.exp).",
  scope: "account",
  entityType: "account",
  severity: "warning",
  category: "health",
  optimization: false,
  params: [{ name: "p_days", default: 7, description: "Fires when the JWT expires within this many days." }],
  detailColumns: [
    ACCOUNT_COLUMN,
    EXPIRES_COLUMN,
    {
      name: "expires_in_seconds",
      type: "BIGINT",
      description:
        "Seconds from the epoch to the expiry; 0 or less when it has passed and the server has not yet flagged the account.",
    },
    SERVERS_COLUMN,
  ],
  sql: `
SELECT ${STATE_ENTITY}, 'warning' AS severity, s.account, s.jwt_expires,
       CAST(epoch(s.jwt_expires) - epoch(s.epoch) AS BIGINT) AS expires_in_seconds,
       CAST(s.servers AS VARCHAR[]) AS servers
${STATE_ROWS}
WHERE s.state = 'live' AND s.jwt_expires <= s.epoch + to_seconds(CAST(p_days * 86400 AS DOUBLE))`,
};
