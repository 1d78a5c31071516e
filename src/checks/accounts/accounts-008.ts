import type { Check } from "../check.ts";
import {
  ACCOUNT_COLUMN,
  EXPIRES_COLUMN,
  SERVERS_COLUMN,
  STATE_ENTITY,
  STATE_ROWS,
} from "./jwt-expiry-sql.ts";

/**
 * natsmon's own check (the reference catalogue has none on account JWT expiry). An account
 * the servers flag expired while its JWT's exp has passed (hx.account_states state
 * `expired`); one flagged expired before its exp was deleted from the resolver, on purpose,
 * and is not reported (change-003 reports it removed). The other account checks leave both
 * out (checks.accounts_gone).
 */
export const accounts008: Check = {
  code: "accounts-008",
  name: "Account JWT Expired",
  description:
    "natsmon's own check, not in the reference catalogue. The account's JWT has expired (its `exp` claim has passed) and the servers named still hold the account, flagged expired (ACCOUNTZ `expired`): they disconnected its users and refuse every new connection of the account, and its exports no longer reach the accounts importing them. The other account checks leave an expired account out, since what the servers still show of it is stale.",
  remediation:
    "Issue the account a JWT with a later expiry, or none, and push it: `nsc edit account <account> --expiry <date>` (or `--expiry 0`), then `nsc push -a <account>`; the servers take it at once and the users can connect again. If the account is no longer wanted, delete it from the resolver (`nsc delete account`, `nats server request` $SYS.REQ.CLAIMS.DELETE) and remove its users' credentials.",
  scope: "account",
  entityType: "account",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [ACCOUNT_COLUMN, EXPIRES_COLUMN, SERVERS_COLUMN],
  sql: `
SELECT ${STATE_ENTITY}, 'critical' AS severity, s.account, s.jwt_expires, CAST(s.servers AS VARCHAR[]) AS servers
${STATE_ROWS}
WHERE s.state = 'expired'`,
};
