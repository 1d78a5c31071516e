import type { Check } from "../check.ts";

export const jetstream002: Check = {
  code: "jetstream-002",
  name: "High Subject Cardinality",
  description:
    "The stream holds a million or more distinct subjects. The per-subject index costs memory on every server holding a replica, slows start-up and recovery, and makes subject-filtered consumers and direct gets scan more.",
  remediation:
    "Check that the subject space is intended (a unique subject per message, e.g. an id in the subject, grows without bound). Limit it with `max_msgs_per_subject` and `max_age` (`nats stream edit <stream> --max-msgs-per-subject=N --max-age=24h`), move the id into the payload or a header, or split the data over several streams.",
  scope: "stream",
  entityType: "stream",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_max_subjects",
      default: 1_000_000,
      description: "Distinct subjects at or above which it fires.",
    },
  ],
  detailColumns: [
    { name: "num_subjects", type: "BIGINT", description: "Distinct subjects stored (leader's state)." },
    { name: "messages", type: "BIGINT", description: "Messages stored." },
    { name: "max_msgs_per_subject", type: "BIGINT", description: "Messages kept per subject; -1 unlimited." },
    { name: "threshold_subjects", type: "BIGINT", description: "p_max_subjects in force." },
  ],
  sql: `
SELECT s.epoch, s.stream_pk AS entity_pk, checks.stream_label(s.domain, s.account, s.stream) AS entity_name, NULL::VARCHAR AS entity_key,
       s.leader AS server, 'warning' AS severity,
       s.num_subjects, s.messages, s.max_msgs_per_subject, CAST(p_max_subjects AS BIGINT) AS threshold_subjects
FROM hx.streams s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.num_subjects >= p_max_subjects`,
};
