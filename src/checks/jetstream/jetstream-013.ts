import type { Check } from "../check.ts";

export const jetstream013: Check = {
  code: "jetstream-013",
  name: "Stream Subject/Message Count Inconsistency",
  description:
    "The stream leader reports more distinct subjects than messages. Every subject counted must hold at least one message, so this cannot happen in a sound store: the leader's per-subject index disagrees with its messages, which points at store damage or an index not rebuilt after a crash. Subject-filtered consumers, KV reads and direct gets may then return wrong results.",
  remediation:
    "Compare the replicas (`nats stream info <stream>` on each, or hx.stream_replicas) and the leader's server log for store errors. Moving the leadership to a healthy replica (`nats stream cluster step-down <stream>`) and rebuilding the damaged replica (`nats stream cluster peer-remove <stream> <server>`) repairs a replicated stream; for a single-replica stream, back it up (`nats stream backup`) and restore it, which rebuilds the store.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "num_subjects", type: "BIGINT", description: "Distinct subjects the leader reports." },
    { name: "messages", type: "BIGINT", description: "Messages the leader reports." },
    { name: "first_seq", type: "BIGINT", description: "First sequence stored." },
    { name: "last_seq", type: "BIGINT", description: "Last sequence stored." },
    { name: "num_deleted", type: "BIGINT", description: "Interior deleted messages." },
  ],
  // Only the leader's figures (hx.streams) are sound; an empty stream has nothing to compare.
  sql: `
SELECT s.epoch, s.stream_pk AS entity_pk, checks.stream_label(s.domain, s.account, s.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       s.leader AS server, 'warning' AS severity, s.num_subjects, s.messages, s.first_seq, s.last_seq, s.num_deleted
FROM hx.streams s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.messages > 0 AND s.num_subjects > s.messages`,
};
