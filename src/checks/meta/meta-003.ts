import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

/** The rolling window before an epoch, as an INTERVAL (the threshold may be fractional). */
const WINDOW = "to_microseconds(CAST(p_window_minutes * 60000000 AS BIGINT))";

export const meta003: Check = {
  code: "meta-003",
  name: "Meta Leader Flapping",
  description:
    "The JetStream meta leader changed more often than allowed within the rolling window before the epoch. Every change is an election during which JetStream API requests (stream and consumer create, update, delete, info) stall or fail; frequent changes point at an unstable network, overloaded servers or timeouts between the meta peers.",
  remediation:
    "Look at the servers' logs around the changes for lost routes, slow disk or high CPU, and at route round-trip times (`nats server report routes`) between the meta peers. Check that the servers are not short of CPU or memory and that storage latency is low. If one server keeps winning and losing, move leadership away with `nats server raft step-down` and investigate that server.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [
    { name: "p_max_changes", default: 1, description: "Leader changes allowed within the window." },
    { name: "p_window_minutes", default: 10, description: "Length of the rolling window, minutes." },
  ],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    { name: "leader", type: "VARCHAR", description: "Meta leader at this epoch." },
    { name: "leader_changes", type: "BIGINT", description: "Leader changes within the window." },
    {
      name: "leaders",
      type: "VARCHAR[]",
      description: "The leaders in turn over the window: the one before the first change, then each new one.",
    },
    { name: "window_minutes", type: "DOUBLE", description: "Length of the rolling window, minutes." },
    { name: "max_changes", type: "DOUBLE", description: "Leader changes allowed within the window." },
  ],
  // The scan starts an hour before the first window's start, so that a change early in the
  // window has the leader before it (changes before the window are not counted); a bound of
  // its own, not the last epoch before the window, which read every epoch's rows. Leaderless
  // epochs (elections) are skipped: a change is a different leader than the last one seen.
  sql: `
WITH ${metaGroupsCte(`ep_from - ${WINDOW} - INTERVAL 1 HOUR`, "ep_to")}, led AS (
  SELECT epoch, meta_pk, leader, lag(leader) OVER (PARTITION BY meta_pk ORDER BY epoch) AS before
  FROM meta_groups WHERE leader IS NOT NULL
), changes AS (
  SELECT epoch, meta_pk, before, leader FROM led WHERE before IS NOT NULL AND before <> leader
)
SELECT g.epoch, g.meta_pk AS entity_pk, any_value(g.group_name) AS entity_name, NULL::VARCHAR AS entity_key,
       any_value(g.leader) AS server, 'warning' AS severity, any_value(g.domain) AS domain,
       any_value(g.leader) AS leader, count(*) AS leader_changes,
       CAST([first(c.before ORDER BY c.epoch)] || list(c.leader ORDER BY c.epoch) AS VARCHAR[]) AS leaders,
       CAST(p_window_minutes AS DOUBLE) AS window_minutes, CAST(p_max_changes AS DOUBLE) AS max_changes
FROM meta_groups g
JOIN changes c ON c.meta_pk = g.meta_pk AND c.epoch <= g.epoch AND c.epoch > g.epoch - ${WINDOW}
WHERE g.epoch BETWEEN ep_from AND ep_to
GROUP BY g.epoch, g.meta_pk
HAVING count(*) > p_max_changes`,
};
