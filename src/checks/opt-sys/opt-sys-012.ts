import type { Check } from "../check.ts";

export const optSys012: Check = {
  code: "opt-sys-012",
  name: "Subscription Churn",
  description:
    "A server's sublist inserted and removed more subscriptions than the threshold per epoch, on average over the window (SUBSZ `num_inserts` + `num_removes`). Each change invalidates the sublist cache and is propagated to every route, gateway and leafnode with interest: constant churn costs CPU cluster-wide and lowers the cache hit rate. It usually comes from clients that subscribe per request (a new inbox each time instead of the shared request inbox), short-lived connections in a reconnect loop, or consumers created and deleted over and over.",
  remediation:
    "Find the connections that churn: `nats server report connections --sort subs` over time, or CONNZ with subscriptions for new short-lived connections. Use the client's shared request/reply inbox (nats.go `nc.Request`, not a `SubscribeSync` per request), keep connections open instead of reconnecting per task, and reuse durable consumers instead of creating ephemeral ones per fetch.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_max_churn",
      default: 10000,
      description:
        "Subscription inserts plus removes per epoch, on average over the window, above which it fires.",
    },
  ],
  detailColumns: [
    {
      name: "churn_per_epoch",
      type: "DOUBLE",
      description: "Inserts plus removes per epoch, averaged over the window's epoch intervals.",
    },
    {
      name: "peak_churn",
      type: "BIGINT",
      description:
        "Largest inserts plus removes per epoch between two answers of the server (spread over the epochs between).",
    },
    {
      name: "intervals",
      type: "BIGINT",
      description: "Epoch intervals the average is taken over, unanswered ones included.",
    },
  ],
  // The counters count since the server started (summed over its accounts' sublists): a
  // drop is a restart or a removed account, and that interval counts as no churn rather
  // than a guess. A server that did not answer some epochs is compared with the epoch it
  // last answered, and the change is spread over the epochs between (numbered among the
  // window's epochs), not taken as one epoch's.
  sql: `
WITH eps AS (
  SELECT epoch, row_number() OVER (ORDER BY epoch) AS idx FROM hx.epochs WHERE epoch BETWEEN ep_from AND ep_to
), steps AS (
  SELECT s.epoch, s.server_pk,
         (s.num_inserts + s.num_removes) - lag(s.num_inserts + s.num_removes) OVER w AS churn,
         lag(s.epoch) OVER w AS prev
  FROM hx.subscription_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.num_inserts IS NOT NULL AND s.num_removes IS NOT NULL
  WINDOW w AS (PARTITION BY s.server_pk ORDER BY s.epoch)
), spans AS (
  SELECT st.server_pk, st.epoch, greatest(st.churn, 0) AS churn, e.idx - p.idx AS spanned
  FROM steps st
  JOIN eps e ON e.epoch = st.epoch
  JOIN eps p ON p.epoch = st.prev
  WHERE st.churn IS NOT NULL
), per_server AS (
  SELECT server_pk, max(epoch) AS epoch, sum(churn) / sum(spanned) AS churn_per_epoch,
         max(churn / spanned) AS peak_churn, sum(spanned) AS intervals
  FROM spans
  GROUP BY server_pk
)
SELECT p.epoch, p.server_pk AS entity_pk, sv.name AS entity_name, NULL::VARCHAR AS entity_key, sv.name AS server,
       'info' AS severity, CAST(p.churn_per_epoch AS DOUBLE) AS churn_per_epoch,
       CAST(p.peak_churn AS BIGINT) AS peak_churn, CAST(p.intervals AS BIGINT) AS intervals
FROM per_server p
JOIN hx.server_ident sv ON sv.server_pk = p.server_pk
WHERE p.churn_per_epoch > p_max_churn`,
};
