import type { Check } from "../check.ts";

/**
 * An account's bytes over gateways against all its bytes, over the window: account STATZ
 * counts, per server, the bytes the server sent to and received from the account's
 * connections of every kind, and from 2.11.5 the share of them that went over gateways
 * (hx.account_stats sent_/received_gateway_bytes; the totals include them). Each server's
 * counters are followed from epoch to epoch; a counter that fell (the server restarted, or
 * evicted and loaded the account again) counts what it holds now. A message that crosses a
 * gateway is counted on both servers, in the gateway bytes and in the totals alike, so the
 * share is the share of the account's traffic that crosses clusters. The system account's
 * own traffic (events, requests between servers) is left out. From 2.11.5 `received` also
 * counts what arrives over routes, twice for an account with a route of its own (a pinned
 * account route: read loop and route both count it, up to 2.14.5 at least): for such an
 * account the total is too large and the gateway share comes out low.
 */
export const optPlace003: Check = {
  code: "opt-place-003",
  name: "High Gateway Traffic Ratio",
  description:
    "A large share of the account's bytes crossed gateways in the window: its publishers and subscribers (or its streams and their clients) sit in different clusters of the super-cluster. Traffic between clusters goes over the slower, often paid, links between regions and waits on their round trips; requests to services in another cluster take that round trip twice.",
  remediation:
    "See where the account's clients and streams are: `nats server report connections --account <account>` (server and cluster of each client) and `nats stream report` (cluster of each stream's leader). Connect clients to the cluster that holds the data they use (one URL list per region), place streams near their producers and consumers (`nats stream edit <stream> --cluster <cluster>` or placement tags), or mirror a stream into the other cluster for its local readers; keep services in every cluster that calls them (queue groups prefer local members).",
  scope: "account",
  entityType: "account",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.11.5",
  params: [
    {
      name: "p_warn_percent",
      default: 30,
      description: "Fires when this percentage or more of the account's bytes crossed gateways.",
    },
    {
      name: "p_min_total_bytes",
      default: 1_048_576,
      description: "Only accounts that moved at least this many bytes in the window are judged.",
    },
  ],
  detailColumns: [
    {
      name: "gateway_bytes",
      type: "BIGINT",
      description: "Bytes of the account sent or received over gateways.",
    },
    {
      name: "total_bytes",
      type: "BIGINT",
      description: "All bytes of the account sent or received, all servers.",
    },
    { name: "gateway_pct", type: "DOUBLE", description: "gateway_bytes as a percentage of total_bytes." },
  ],
  sql: `
WITH samples AS (
  SELECT a.epoch, a.account_pk, a.sent_bytes + a.received_bytes AS total,
         a.sent_gateway_bytes + a.received_gateway_bytes AS gw,
         lag(a.sent_bytes + a.received_bytes) OVER p AS prev_total,
         lag(a.sent_gateway_bytes + a.received_gateway_bytes) OVER p AS prev_gw
  FROM hx.account_stats a
  WHERE a.epoch BETWEEN ep_from AND ep_to AND a.sent_bytes IS NOT NULL AND a.received_bytes IS NOT NULL
    AND a.sent_gateway_bytes IS NOT NULL AND a.received_gateway_bytes IS NOT NULL
  WINDOW p AS (PARTITION BY a.account_pk, a.server_pk ORDER BY a.epoch)
), moved AS (
  SELECT account_pk, max(epoch) AS epoch,
         sum(CASE WHEN prev_total IS NULL THEN 0 WHEN total < prev_total OR gw < prev_gw THEN total
                  ELSE total - prev_total END) AS total_bytes,
         sum(CASE WHEN prev_total IS NULL THEN 0 WHEN total < prev_total OR gw < prev_gw THEN gw
                  ELSE gw - prev_gw END) AS gateway_bytes
  FROM samples
  GROUP BY account_pk
)
SELECT m.epoch, m.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), i.name) AS entity_name,
       NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server, 'info' AS severity,
       CAST(m.gateway_bytes AS BIGINT) AS gateway_bytes, CAST(m.total_bytes AS BIGINT) AS total_bytes,
       CAST(100.0 * m.gateway_bytes / m.total_bytes AS DOUBLE) AS gateway_pct
FROM moved m
JOIN hx.account_ident i ON i.account_pk = m.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = m.account_pk AND m.epoch >= o.epoch
WHERE m.total_bytes >= p_min_total_bytes AND m.total_bytes > 0
  AND 100.0 * m.gateway_bytes >= p_warn_percent * m.total_bytes AND NOT coalesce(o.is_system, false)`,
};
