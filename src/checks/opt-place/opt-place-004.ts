import type { Check } from "../check.ts";

/**
 * The fold keeps, per gateway connection, how many of GATEWAYZ's accounts are not in
 * Interest-Only mode (Optimistic or Transitioning), not their names: the finding is per
 * outbound gateway connection (a server and the remote cluster it sends to), with that
 * count, at the latest epoch of the window where the connection was up.
 */
export const optPlace004: Check = {
  code: "opt-place-004",
  name: "Gateway Interest Mode",
  description:
    "Some accounts on this outbound gateway connection still run in optimistic interest mode: the server sends the remote cluster every message of those accounts unless the remote has said it has no interest in the subject, instead of only what the remote cluster subscribes to. Until the account switches to Interest-Only (after enough no-interest replies), messages cross the gateway for nothing. Current servers switch every account at once when both sides support it, so an optimistic account usually means an old server at one end.",
  remediation:
    "List the accounts and their mode in the server's GATEWAYZ with account details (`nats server request gateways` with its accounts option, or `/gatewayz?accs=1` on the monitoring port): each account of the outbound gateway shows its interest_mode. Upgrade the servers at both ends of the gateway to a current nats-server release, which puts every account in Interest-Only mode as soon as the gateway connects; until then, an account with much traffic the remote does not want switches only after interest_only_threshold (1000) no-interest replies.",
  scope: "gateway (account x remote cluster)",
  entityType: "gateway",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    { name: "remote_cluster", type: "VARCHAR", description: "Cluster the gateway connection sends to." },
    { name: "remote_server", type: "VARCHAR", description: "Server of that cluster at the other end." },
    {
      name: "optimistic_accounts",
      type: "INTEGER",
      description: "Accounts of the connection not in Interest-Only mode (Optimistic or Transitioning).",
    },
    { name: "accounts", type: "INTEGER", description: "Accounts GATEWAYZ lists for the connection." },
  ],
  sql: `
WITH latest AS (
  SELECT gateway_pk, max(epoch) AS epoch
  FROM hx.gateway_stats
  WHERE epoch BETWEEN ep_from AND ep_to AND connected AND accounts IS NOT NULL
  GROUP BY gateway_pk
)
SELECT g.epoch, g.gateway_pk AS entity_pk, g.server || ' -> ' || g.gateway AS entity_name, NULL::VARCHAR AS entity_key,
       g.server, 'info' AS severity, g.gateway AS remote_cluster, g.remote_server,
       g.accounts_not_interest_only AS optimistic_accounts, g.accounts
FROM hx.gateways g
JOIN latest l ON l.gateway_pk = g.gateway_pk AND l.epoch = g.epoch
WHERE g.epoch BETWEEN ep_from AND ep_to AND g.direction = 'outbound' AND g.accounts_not_interest_only > 0`,
};
