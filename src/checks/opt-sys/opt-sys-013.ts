import type { Check } from "../check.ts";
import { ASSET, ASSET_COLUMN, ASSET_JOINS, RAFT_NODES_CTE } from "./raft-node-sql.ts";

export const optSys013: Check = {
  code: "opt-sys-013",
  name: "Raft Sustained Catching Up",
  description:
    "A server's member of a raft group has been catching up to its leader (RAFTZ `catching_up`) for longer than the threshold, without a break up to its latest epoch in the window. Catching up normally takes seconds after a restart; a node that stays in it is not a usable replica (the group has one redundant copy fewer), keeps the leader busy sending it the log or snapshots, and may never make it when the group writes faster than the node can follow.",
  remediation:
    "Check the catching-up server: disk throughput and free space, CPU, and the route to the leader (`nats server report jetstream`, `nats server report routes`). A stream's replica that does not converge can be rebuilt from scratch: `nats stream cluster peer-remove <stream> <server>` lets the meta leader place a new replica that copies a snapshot. Lower the write rate of the group meanwhile if it outruns the node.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "warning",
  category: "health",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.26",
  params: [
    {
      name: "p_min_minutes",
      default: 5,
      description: "Minutes the node must have been catching up without a break before it is reported.",
    },
  ],
  detailColumns: [
    ASSET_COLUMN,
    {
      name: "catching_up_since",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "First epoch of the window since which the node has been catching up without a break.",
    },
    {
      name: "catching_up_minutes",
      type: "DOUBLE",
      description: "Minutes from catching_up_since to the latest epoch.",
    },
    { name: "committed", type: "BIGINT", description: "Highest log index the node knows is committed." },
    { name: "applied", type: "BIGINT", description: "Highest log index the node has applied." },
  ],
  // The run is measured in time, not epochs, so the threshold means the same at any scrape
  // interval; a run that began before the window counts from the window's first epoch.
  sql: `
WITH ${RAFT_NODES_CTE}, per_node AS (
  SELECT n.raft_group_pk, n.server_pk, max(n.epoch) AS epoch,
         max(n.epoch) FILTER (WHERE NOT coalesce(n.raft_catching_up, false)) AS last_caught_up,
         arg_max({committed: n.raft_committed, applied: n.raft_applied, catching_up: n.raft_catching_up}, n.epoch) AS last
  FROM nodes n
  GROUP BY n.raft_group_pk, n.server_pk
  HAVING arg_max(coalesce(n.raft_catching_up, false), n.epoch)
), runs AS (
  SELECT p.*, (SELECT min(n.epoch) FROM nodes n
               WHERE n.raft_group_pk = p.raft_group_pk AND n.server_pk = p.server_pk
                 AND n.epoch > coalesce(p.last_caught_up, '-infinity'::TIMESTAMPTZ)) AS since
  FROM per_node p
)
SELECT r.epoch, r.raft_group_pk AS entity_pk, g.name AS entity_name, sv.name AS entity_key, sv.name AS server,
       'warning' AS severity, ${ASSET} AS asset, r.since AS catching_up_since,
       CAST(epoch_ms(r.epoch) - epoch_ms(r.since) AS DOUBLE) / 60000 AS catching_up_minutes,
       CAST(r.last.committed AS BIGINT) AS committed, CAST(r.last.applied AS BIGINT) AS applied
FROM runs r
JOIN hx.raft_group_ident g ON g.raft_group_pk = r.raft_group_pk
JOIN hx.server_ident sv ON sv.server_pk = r.server_pk
${ASSET_JOINS}
WHERE epoch_ms(r.epoch) - epoch_ms(r.since) >= p_min_minutes * 60000`,
};
