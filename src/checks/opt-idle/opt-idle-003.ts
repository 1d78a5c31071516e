import type { Check } from "../check.ts";

/**
 * A consumer whose last delivered stream sequence, as its leader reports it, is the same in
 * every epoch of the window that holds it, over at least p_min_samples epochs. It fires
 * whether or not messages wait for it: num_pending tells a consumer nobody reads (messages
 * wait) from one whose stream is idle too (nothing waits; opt-idle-004 then names it a
 * removal candidate).
 */
export const optIdle003: Check = {
  code: "opt-idle-003",
  name: "Inactive Consumer",
  description:
    "The consumer delivered nothing new over the whole range: its last delivered stream sequence is the same in every sample. With messages pending, nobody reads it any more (the application was stopped or moved to another consumer, a push consumer lost its subscriber) while the stream keeps the messages for it; an interest or work-queue stream cannot remove them. With nothing pending, its stream is quiet too.",
  remediation:
    "Look at `nats consumer info <stream> <consumer>` (Last Delivered Message, Unprocessed Messages, Waiting Pulls, and for a push consumer whether it is Active). If the application that read it is gone, remove the consumer with `nats consumer rm <stream> <consumer>`, so that the stream can let go of the messages it keeps for it; for consumers an application creates on the fly, prefer ephemeral ones or set `inactive_threshold` so that the server removes them. If it should be reading, restart or fix its clients.",
  scope: "consumer",
  entityType: "consumer",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_samples",
      default: 2,
      description: "Epochs with the consumer the range must hold before it is judged.",
    },
  ],
  detailColumns: [
    {
      name: "delivered_stream_seq",
      type: "BIGINT",
      description: "Last stream sequence delivered, unchanged over the range.",
    },
    { name: "num_pending", type: "BIGINT", description: "Messages of the stream not yet delivered to it." },
    {
      name: "last_active",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Time of its last delivery; NULL when it never delivered.",
    },
  ],
  sql: `
WITH idle AS (
  SELECT s.*
  FROM (
    SELECT consumer_pk, max(epoch) AS epoch, count(*) AS samples,
           min(delivered_stream_seq) = max(delivered_stream_seq) AS unchanged
    FROM hx.consumer_stats
    WHERE epoch BETWEEN ep_from AND ep_to
    GROUP BY consumer_pk
  ) w
  JOIN hx.consumer_stats s ON s.consumer_pk = w.consumer_pk AND s.epoch = w.epoch AND s.epoch BETWEEN ep_from AND ep_to
  WHERE w.samples >= p_min_samples AND w.unchanged
)
SELECT d.epoch, d.consumer_pk AS entity_pk, checks.consumer_label(si.domain, si.account, si.name, ci.name) AS entity_name,
       NULL::VARCHAR AS entity_key, l.name AS server, 'info' AS severity,
       CAST(d.delivered_stream_seq AS BIGINT) AS delivered_stream_seq,
       CAST(d.num_pending AS BIGINT) AS num_pending, CAST(d.last_active AS TIMESTAMPTZ) AS last_active
FROM idle d
JOIN hx.consumer_ident ci ON ci.consumer_pk = d.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = d.leader_server_pk`,
};
