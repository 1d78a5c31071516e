import type { Check } from "../check.ts";
import { ASSET, ASSET_COLUMN, ASSET_JOINS, RAFT_NODES_CTE } from "./raft-node-sql.ts";

/**
 * A raft node whose longest internal queue (RAFTZ ipq_proposal_len, ipq_entry_len,
 * ipq_resp_len, ipq_apply_len) was over p_max_ipq in at least one epoch of the window.
 * Queue lengths come and go within seconds, so, as opt-sys-005 does for route pending bytes,
 * the window counts when it saw the node backed up at all, how often and how far.
 */
export const optSys010: Check = {
  code: "opt-sys-010",
  name: "Raft IPQ Backpressure",
  description:
    "One of the internal queues of a server's member of a raft group held more than the threshold of items in at least one epoch of the window (RAFTZ `ipq_proposal_len`, `ipq_entry_len`, `ipq_resp_len`, `ipq_apply_len`). These queues feed the node's raft loop: proposals waiting to be replicated (leader), entries from the leader waiting to be stored (follower), follower responses waiting to be counted (leader) and committed entries waiting to be applied. A long queue means the node cannot keep up with the group's write rate: publishes to the stream, or acks of the consumer, wait longer for their raft round, memory grows, and a follower that falls behind ends up catching up from a snapshot.",
  remediation:
    "Find which queue backs up (the `queue` column) and on which server. A long apply or entry queue points at the server's disk or CPU (I/O wait, fsync latency, `nats server report jetstream`); a long proposal or response queue on a leader at more writes than the group can replicate, or at slow routes to its followers (`nats server report routes`). Look at the server's IPQUEUESZ and RAFTZ over time (`/ipqueuesz`, `/raftz` on its monitoring port, 2.10.26+). Spread busy streams over more servers (move the leader with `nats stream cluster step-down <stream>`, or place streams with `--cluster` / placement tags), batch or slow down publishers, and give the servers faster disks.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "warning",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.26",
  params: [
    {
      name: "p_max_ipq",
      default: 1000,
      description:
        "Items in the longest of the node's proposal, entry, response and apply queues above which an epoch counts as backed up.",
    },
  ],
  detailColumns: [
    ASSET_COLUMN,
    {
      name: "queue",
      type: "VARCHAR",
      description: "The queue that was longest at the peak: proposal, entry, resp or apply.",
    },
    { name: "peak_len", type: "BIGINT", description: "Longest queue length seen in the window." },
    {
      name: "epochs_over",
      type: "BIGINT",
      description: "Epochs of the window in which a queue was longer than the threshold.",
    },
    {
      name: "queue_len",
      type: "BIGINT",
      description: "Length of the node's longest queue at its latest epoch of the window.",
    },
  ],
  sql: `
WITH ${RAFT_NODES_CTE}, longest AS (
  SELECT n.epoch, n.raft_group_pk, n.server_pk, q.len, q.len > p_max_ipq AS over,
         CASE q.len WHEN n.raft_ipq_apply_len THEN 'apply' WHEN n.raft_ipq_entry_len THEN 'entry'
                    WHEN n.raft_ipq_proposal_len THEN 'proposal' ELSE 'resp' END AS queue
  FROM nodes n,
       LATERAL (SELECT greatest(n.raft_ipq_proposal_len, n.raft_ipq_entry_len, n.raft_ipq_resp_len,
                                n.raft_ipq_apply_len) AS len) q
  WHERE n.raft_ipq_proposal_len IS NOT NULL
), per_node AS (
  SELECT raft_group_pk, server_pk, max(epoch) AS epoch, max(len) AS peak_len, arg_max(queue, len) AS queue,
         count(*) FILTER (WHERE over) AS epochs_over, arg_max(len, epoch) AS queue_len
  FROM longest
  GROUP BY raft_group_pk, server_pk
  HAVING bool_or(over)
)
SELECT p.epoch, p.raft_group_pk AS entity_pk, g.name AS entity_name, sv.name AS entity_key, sv.name AS server,
       'warning' AS severity, ${ASSET} AS asset, p.queue, CAST(p.peak_len AS BIGINT) AS peak_len,
       CAST(p.epochs_over AS BIGINT) AS epochs_over, CAST(p.queue_len AS BIGINT) AS queue_len
FROM per_node p
JOIN hx.raft_group_ident g ON g.raft_group_pk = p.raft_group_pk
JOIN hx.server_ident sv ON sv.server_pk = p.server_pk
${ASSET_JOINS}`,
};
