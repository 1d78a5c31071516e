import type { Check } from "../check.ts";
import { streamPositionSql } from "./stream-position-sql.ts";

export const consumer005: Check = {
  code: "consumer-005",
  name: "Consumer Sequence Ahead of Stream Sequence",
  description:
    "The consumer claims to have delivered a stream sequence beyond the stream's last sequence. That cannot happen in a healthy system: the stream was deleted and recreated (or restored from an older backup, or reset its sequence) while the consumer state survived, or the replicas disagree after a failure. The consumer will not deliver new messages until the stream passes its recorded position.",
  remediation:
    "Compare `nats consumer info <stream> <consumer>` with `nats stream info <stream>`. If the stream was recreated or restored, delete and recreate the consumer (or create it with `--deliver <sequence>` at the intended point). If the replicas disagree, check `nats server report jetstream` and step the consumer leader down with `nats consumer cluster step-down <stream> <consumer>` once the stream's replicas are current.",
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
      name: "stream_last_seq",
      type: "BIGINT",
      description: "Last sequence of the stream (its leader's figures).",
    },
    { name: "stream_leader", type: "VARCHAR", description: "Stream leader the stream figures come from." },
    {
      name: "leader_copy_last_seq",
      type: "BIGINT",
      description:
        "Last sequence of the consumer leader's own replica of the stream, from the same reply as the consumer's figures; NULL when it holds none.",
    },
    {
      name: "ahead_by",
      type: "BIGINT",
      description: "Sequences the consumer is ahead of the stream: delivered_stream_seq - stream_last_seq.",
    },
  ],
  sql: streamPositionSql({
    condition: (delivered, _first, last) => `${delivered} > ${last}`,
    columns: `CAST(p.delivered_stream_seq AS BIGINT) AS delivered_stream_seq,
       CAST(p.stream_last_seq AS BIGINT) AS stream_last_seq, sl.name AS stream_leader,
       CAST(p.leader_copy_last_seq AS BIGINT) AS leader_copy_last_seq,
       CAST(p.delivered_stream_seq - p.stream_last_seq AS BIGINT) AS ahead_by`,
  }),
};
