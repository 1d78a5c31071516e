import type { Check } from "../check.ts";
import { LEAFNODE_COLUMNS, leafnodeSql } from "./leaf-sql.ts";

export const leaf003: Check = {
  code: "leaf-003",
  name: "Leafnode Subscription Count High",
  description:
    "A leafnode connection carries a very large set of subscriptions (LEAFZ `subscriptions`: the interest propagated over it). When the leaf connects or reconnects, the whole set is sent over the link before anything else; with tens of thousands of subjects that takes long enough for the hub to see the connection as stale and close it, and the leaf then reconnects and starts over. Large interest sets also cost memory and matching time on both ends.",
  remediation:
    "See which account's interest it is (the finding names it) and who subscribes: `nats server report leafnodes`, `nats server request subscriptions`. Subscribe with wildcards instead of one subject per entity, drop unused subscriptions, and export only the subjects the hub needs (account exports/imports, or `deny_imports`/`deny_exports` on the leafnode remote). If the set is legitimately large, raise `ping_interval` × `ping_max` on the hub so an interest sync is not taken for a stale connection.",
  scope: "leafnode connection",
  entityType: "leafnode",
  severity: "dynamic",
  category: "saturation",
  optimization: false,
  params: [
    { name: "p_warn_subs", default: 20000, description: "Warning at this many subscriptions or more." },
    { name: "p_crit_subs", default: 50000, description: "Critical at this many subscriptions or more." },
  ],
  detailColumns: [
    ...LEAFNODE_COLUMNS,
    { name: "subscriptions", type: "BIGINT", description: "Subscriptions propagated over the connection." },
    { name: "threshold", type: "BIGINT", description: "The threshold reached (warning or critical)." },
  ],
  sql: leafnodeSql(
    "CASE WHEN l.subscriptions >= p_crit_subs THEN 'critical' ELSE 'warning' END",
    "CAST(l.subscriptions AS BIGINT) AS subscriptions, CAST(CASE WHEN l.subscriptions >= p_crit_subs THEN p_crit_subs ELSE p_warn_subs END AS BIGINT) AS threshold",
    "l.subscriptions >= p_warn_subs",
  ),
};
