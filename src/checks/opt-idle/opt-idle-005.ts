import type { Check } from "../check.ts";

/**
 * An account that nothing used for p_threshold_secs, from account STATZ (one row per account
 * and server, counters since the server started or the account was loaded on it).
 *
 * Activity is a client or leafnode connection in any sample of the window, or a message
 * counter that moved between two samples of the same server (a counter that fell and is not
 * zero counted messages after a restart). An account with none is idle since the start of
 * what the catalog watched of it: ep_from when the catalog holds an epoch at or before it,
 * else the first epoch there is, and never before the account was first seen. A server whose
 * counters for it are zero vouches for longer, from the server's start: no message of the
 * account crossed it since (the "never" of the catalogue). Every server that lists the
 * account at its latest epoch must vouch, so the idle time is the shortest one.
 *
 * The system account and the global account `$G` (present on every server, and not
 * removable) are left out.
 */
export const optIdle005: Check = {
  code: "opt-idle-005",
  name: "Inactive Account",
  description:
    "A non-system account had no client or leafnode connection and moved no message for at least the threshold (a day by default), or never moved any since its servers started. An account nobody uses still holds its users' credentials, imports and exports, and any JetStream streams and reservations it has; in operator mode its JWT stays on the resolver.",
  remediation:
    "Find who owns the account and whether it is still needed: `nats server report accounts` (or `nats server request accounts`) shows its connections and traffic, and `nats account info` run with its credentials its JetStream use. If it is no longer needed, back up and remove its streams, then remove the account: delete it from the server configuration's `accounts` block and reload, or in operator mode `nsc delete account <name>` and remove it from the resolver with `nsc push --prune` (a nats-resolver deletes accounts only with `allow_delete: true`; its JWT stays there otherwise), and revoke its users.",
  scope: "account",
  entityType: "account",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 86_400,
  params: [
    {
      name: "p_threshold_secs",
      default: 86_400,
      description: "Seconds the account must have been seen idle (or unused since its servers started).",
    },
  ],
  detailColumns: [
    {
      name: "idle_secs",
      type: "BIGINT",
      description: "Seconds the account is known to have been idle, up to the epoch of the row.",
    },
    {
      name: "never_used",
      type: "BOOLEAN",
      description: "Whether no server has counted a message of it since that server started.",
    },
    {
      name: "js_streams",
      type: "INTEGER",
      description: "JetStream streams it still holds; NULL when it has no JetStream.",
    },
  ],
  sql: `
WITH samples AS (
  SELECT a.epoch, a.account_pk, a.server_pk, a.conns, a.leafnodes, a.sent_msgs, a.received_msgs, a.js_streams,
         lag(a.sent_msgs) OVER p AS prev_sent, lag(a.received_msgs) OVER p AS prev_received
  FROM hx.account_stats a
  WHERE a.epoch BETWEEN ep_from AND ep_to
  WINDOW p AS (PARTITION BY a.account_pk, a.server_pk ORDER BY a.epoch)
), quiet AS (
  SELECT account_pk, max(epoch) AS epoch
  FROM samples
  GROUP BY account_pk
  HAVING NOT coalesce(bool_or(
    coalesce(conns, 0) + coalesce(leafnodes, 0) > 0
    OR sent_msgs > prev_sent OR (sent_msgs < prev_sent AND sent_msgs > 0)
    OR received_msgs > prev_received OR (received_msgs < prev_received AND received_msgs > 0)), false)
), observed AS (
  SELECT CASE WHEN EXISTS (SELECT 1 FROM hx.epochs WHERE epoch <= ep_from) THEN ep_from
              ELSE (SELECT min(epoch) FROM hx.epochs WHERE epoch BETWEEN ep_from AND ep_to) END AS since
), judged AS (
  SELECT q.account_pk, q.epoch,
         -- A server vouches from its own start only for an account natsmon has known since it
         -- began watching: one that appeared later may be new, not idle since the start.
         max(CASE WHEN s.sent_msgs = 0 AND s.received_msgs = 0 AND st.start IS NOT NULL
                       AND ai.first_epoch <= (SELECT min(epoch) FROM hx.epochs)
                  THEN least(st.start, greatest(o.since, ai.first_epoch))
                  ELSE greatest(o.since, ai.first_epoch) END) AS idle_since,
         bool_and(coalesce(s.sent_msgs = 0 AND s.received_msgs = 0, false)) AS never_used,
         sum(s.js_streams) AS js_streams
  FROM quiet q
  JOIN samples s ON s.account_pk = q.account_pk AND s.epoch = q.epoch
  JOIN hx.account_ident ai ON ai.account_pk = q.account_pk
  CROSS JOIN observed o
  LEFT JOIN hx.server_stats st ON st.server_pk = s.server_pk AND st.epoch = q.epoch AND st.epoch BETWEEN ep_from AND ep_to
  GROUP BY q.account_pk, q.epoch
)
SELECT j.epoch, j.account_pk AS entity_pk, checks.account_label(ai.name) AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'info' AS severity,
       CAST(epoch(j.epoch) - epoch(j.idle_since) AS BIGINT) AS idle_secs, j.never_used,
       CAST(j.js_streams AS INTEGER) AS js_streams
FROM judged j
JOIN hx.account_ident ai ON ai.account_pk = j.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = j.account_pk AND j.epoch >= o.epoch
WHERE epoch(j.epoch) - epoch(j.idle_since) >= p_threshold_secs
  AND NOT coalesce(o.is_system, false) AND ai.name <> '$G'
  AND ai.name NOT IN (SELECT system_account FROM hx.server_opts WHERE system_account IS NOT NULL)`,
};
