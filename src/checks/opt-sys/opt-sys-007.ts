import type { Check } from "../check.ts";
import { ASSET, ASSET_COLUMN, ASSET_JOINS, RAFT_NODES_CTE } from "./raft-node-sql.ts";

export const optSys007: Check = {
  code: "opt-sys-007",
  name: "Raft Apply Lag",
  description:
    "A server's member of a raft group has applied its log more than the threshold of entries behind what it knows is committed (RAFTZ `committed` − `applied`), while not catching up from a snapshot. The entries are agreed and stored, but the server has not yet acted on them: its copy of the stream, consumer or JetStream metadata is stale, reads it serves lag behind, and it holds more log in memory and on disk. A steady lag points at a server too slow for the group's write rate (disk, CPU) or stalled in applying.",
  remediation:
    "Look at the server holding the node: disk latency and I/O wait, CPU, memory (`nats server report jetstream`, `nats server list`), and the server's RAFTZ over time (`/raftz` on its monitoring port, 2.10.26+) to see whether `applied` moves at all. A node that never moves can be rebuilt: `nats stream cluster peer-remove <stream> <server>` (or step the leader down with `nats stream cluster step-down <stream>` when it is the leader). Spread busy streams over more servers when one server leads or replicates too many.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "warning",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.26",
  params: [
    {
      name: "p_max_lag",
      default: 100,
      description: "Committed but not yet applied entries above which the node is reported.",
    },
  ],
  detailColumns: [
    ASSET_COLUMN,
    { name: "committed", type: "BIGINT", description: "Highest log index the node knows is committed." },
    { name: "applied", type: "BIGINT", description: "Highest log index the node has applied." },
    { name: "apply_lag", type: "BIGINT", description: "committed − applied." },
  ],
  // A node catching up from a snapshot applies in bulk once the snapshot is in: its gap says
  // nothing about its speed (opt-sys-013 reports it when it lasts).
  sql: `
WITH ${RAFT_NODES_CTE}, latest AS (
  SELECT n.raft_group_pk, n.server_pk, max(n.epoch) AS epoch,
         arg_max({committed: n.raft_committed, applied: n.raft_applied, catching_up: n.raft_catching_up}, n.epoch) AS last
  FROM nodes n
  GROUP BY n.raft_group_pk, n.server_pk
), lagging AS (
  SELECT * FROM latest l
  WHERE NOT coalesce(l.last.catching_up, false) AND l.last.committed - l.last.applied > p_max_lag
)
SELECT l.epoch, l.raft_group_pk AS entity_pk, g.name AS entity_name, sv.name AS entity_key, sv.name AS server,
       'warning' AS severity, ${ASSET} AS asset,
       CAST(l.last.committed AS BIGINT) AS committed, CAST(l.last.applied AS BIGINT) AS applied,
       CAST(l.last.committed - l.last.applied AS BIGINT) AS apply_lag
FROM lagging l
JOIN hx.raft_group_ident g ON g.raft_group_pk = l.raft_group_pk
JOIN hx.server_ident sv ON sv.server_pk = l.server_pk
${ASSET_JOINS}`,
};
