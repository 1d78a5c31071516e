import type { Check } from "../check.ts";
import { streamPositionSql } from "./stream-position-sql.ts";

export const consumer004: Check = {
  code: "consumer-004",
  name: "Consumer Delivered Below Stream First Sequence",
  description:
    "The last stream sequence the consumer delivered is below the stream's first sequence, with a gap: messages after the consumer's position were removed from the stream (a purge, a truncation, limits such as max_age, max_msgs or max_bytes, or a restore of an older backup) before this consumer delivered them. Those messages are lost for this consumer; it will resume at the stream's first sequence. A consumer that delivered everything and sits exactly one below the first sequence (an emptied stream) is fine and not reported. Filtered consumers (`filter_subject` or `filter_subjects` set) are not judged: their delivered position moves only with messages on their filter, so the stream's first sequence passes it whenever other subjects' messages are removed (max_age, or a work-queue or interest stream removing messages other consumers acknowledged), and the scrape cannot tell which subjects were removed.",
  remediation:
    "Find what removed the messages: `nats stream info <stream>` (limits, first sequence, deleted count) and the JetStream advisories for purges. If the consumer must see every message, raise the stream limits or make the consumer keep up (more workers, larger max_ack_pending). If the gap is expected (a deliberate purge), no action is needed beyond the consumer resuming; to replay from a given point, recreate the consumer with `--deliver <sequence>`. For a filtered consumer, which this check does not judge, compare its `num_pending` and ack floor with `nats stream subjects <stream>` to see whether messages on its filter were removed.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "delivered_stream_seq",
      type: "BIGINT",
      description: "Last stream sequence the consumer delivered (its leader's figures).",
    },
    {
      name: "stream_first_seq",
      type: "BIGINT",
      description: "First sequence of the stream (its leader's figures).",
    },
    {
      name: "stream_last_seq",
      type: "BIGINT",
      description: "Last sequence of the stream (its leader's figures).",
    },
    { name: "stream_leader", type: "VARCHAR", description: "Stream leader the stream figures come from." },
    {
      name: "leader_copy_first_seq",
      type: "BIGINT",
      description:
        "First sequence of the consumer leader's own replica of the stream, from the same reply as the consumer's figures; NULL when it holds none.",
    },
    {
      name: "skipped",
      type: "BIGINT",
      description:
        "Messages removed before the consumer delivered them: stream_first_seq - 1 - delivered_stream_seq.",
    },
  ],
  // The catalogue's "delivered < first_seq" would also fire for every caught-up consumer of an
  // emptied stream (workqueue or interest retention, or a purge after everything was
  // delivered), where delivered = first_seq - 1 and nothing was lost. A filtered consumer is
  // left out: the gap below first_seq may be other subjects' messages only, removed by
  // limits or by other consumers' acks, and nothing in the scrape says which subjects went.
  sql: streamPositionSql({
    unfilteredOnly: true,
    condition: (delivered, first) => `${delivered} > 0 AND ${delivered} < ${first} - 1`,
    columns: `CAST(p.delivered_stream_seq AS BIGINT) AS delivered_stream_seq,
       CAST(p.stream_first_seq AS BIGINT) AS stream_first_seq, CAST(p.stream_last_seq AS BIGINT) AS stream_last_seq,
       sl.name AS stream_leader, CAST(p.leader_copy_first_seq AS BIGINT) AS leader_copy_first_seq,
       CAST(p.stream_first_seq - 1 - p.delivered_stream_seq AS BIGINT) AS skipped`,
  }),
};
