import type { Check } from "../check.ts";

/**
 * Over every epoch of the window holding the stream: its consumer count (from the leader)
 * rose in at least p_min_growth_epochs steps between epochs, by p_min_total_growth from the
 * first epoch to the latest, and did not fall in at least p_min_mono_frac of the steps.
 */
export const optSys025: Check = {
  code: "opt-sys-025",
  name: "Sustained Consumer Growth on Stream",
  description:
    "The number of consumers on the stream kept climbing over the window: it rose in many epochs, by 500 or more in all, and hardly ever fell. That is the pattern of a consumer leak, an application that creates a consumer (often an ephemeral or ordered one, or a durable with a generated name) per request, connection or restart and never deletes it. Every consumer costs memory, a raft group when replicated, and work on every publish for the stream's leader; thousands of them slow the stream and the meta group down.",
  remediation:
    "List the consumers and look at their names, creation times and last activity: `nats consumer report <stream>` (or `nats consumer ls <stream>`). Fix the application to reuse one durable consumer, delete consumers it no longer needs, or create ephemeral consumers with a short `inactive_threshold` so the server removes them. Remove leaked ones with `nats consumer rm <stream> <consumer>`, and cap the stream with `max_consumers` meanwhile.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "errors",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_growth_epochs",
      default: 5,
      description: "Steps between epochs in which the consumer count must rise.",
    },
    {
      name: "p_min_total_growth",
      default: 500,
      description: "Consumers added, from the first epoch of the window to the latest, from which it fires.",
    },
    {
      name: "p_min_mono_frac",
      default: 0.8,
      description: "Share of the steps between epochs in which the consumer count must not fall.",
    },
  ],
  detailColumns: [
    { name: "consumers_first", type: "INTEGER", description: "Consumers in the first epoch of the window." },
    { name: "consumers_last", type: "INTEGER", description: "Consumers in the latest epoch." },
    { name: "growth_epochs", type: "BIGINT", description: "Steps between epochs in which the count rose." },
    {
      name: "rising_frac",
      type: "DOUBLE",
      description: "Share of the steps in which the count did not fall.",
    },
  ],
  sql: `
WITH steps AS (
  SELECT s.epoch, s.stream_pk, s.leader_server_pk, s.consumer_count,
         s.consumer_count - lag(s.consumer_count) OVER (PARTITION BY s.stream_pk ORDER BY s.epoch) AS step
  FROM hx.stream_stats s WHERE s.epoch BETWEEN ep_from AND ep_to AND s.consumer_count IS NOT NULL
),
trend AS (
  SELECT stream_pk, max(epoch) AS epoch, arg_max(leader_server_pk, epoch) AS leader_server_pk,
         arg_min(consumer_count, epoch) AS consumers_first, arg_max(consumer_count, epoch) AS consumers_last,
         count(step) FILTER (WHERE step > 0) AS growth_epochs,
         count(step) FILTER (WHERE step >= 0) / count(step) AS rising_frac
  FROM steps GROUP BY stream_pk
)
SELECT t.epoch, t.stream_pk AS entity_pk, checks.stream_label(si.domain, si.account, si.name) AS entity_name, NULL::VARCHAR AS entity_key,
       sv.name AS server, 'warning' AS severity, t.consumers_first, t.consumers_last, t.growth_epochs,
       CAST(t.rising_frac AS DOUBLE) AS rising_frac
FROM trend t
JOIN hx.stream_ident si ON si.stream_pk = t.stream_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = t.leader_server_pk
WHERE t.growth_epochs >= p_min_growth_epochs AND t.consumers_last - t.consumers_first >= p_min_total_growth AND t.rising_frac >= p_min_mono_frac`,
};
