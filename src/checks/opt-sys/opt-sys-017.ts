import type { Check } from "../check.ts";

/**
 * LEAFZ never says `s2_auto`: a connection on s2_auto reports the level it picked from the
 * RTT (nats-server negotiateLeafCompression), `s2_uncompressed` up to 10 ms by default, then
 * `s2_fast`, `s2_better`, `s2_best`. A connection counts as on s2_auto when it reports
 * `s2_auto` (should a release report the mode), `s2_uncompressed` (a level only s2_auto picks
 * unless configured by hand), or more than one s2 level within the window (s2_auto moving
 * with the RTT). A fixed level such as `s2_fast` set on purpose is not counted.
 */
export const optSys017: Check = {
  code: "opt-sys-017",
  name: "Leafnode Auto Compression with High Count",
  description:
    "A server holds many leafnode connections (20 or more) and some of them use s2_auto compression, the default for leafnodes since 2.10. s2_auto measures each connection's RTT and switches its compression level as the RTT moves, so every connection carries an S2 encoder and decoder whose level can change under load; on a hub with many leafs that is CPU and memory spent per connection, and the level each link ends up at is left to chance.",
  remediation:
    "Choose the compression per link on purpose: in the hub's `leafnodes { compression: … }` block (and each leaf's `remotes [{ compression: … }]`) set `off` for leafs on a fast local network, or a fixed level such as `s2_fast` for links across a WAN, then reload. `nats server report leafnodes` and LEAFZ `compression` show the level each connection uses.",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_min_leafs",
      default: 20,
      description: "Leafnode connections a server must hold for the check to look at their compression.",
    },
  ],
  detailColumns: [
    { name: "leafnodes", type: "BIGINT", description: "Leafnode connections in the latest epoch." },
    {
      name: "auto_leafnodes",
      type: "BIGINT",
      description: "Of those, connections on s2_auto compression.",
    },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH leafs AS (
  SELECT s.epoch, s.leafnode_pk, i.server_pk, o.compression
  FROM hx.leafnode_stats s
  JOIN hx.leafnode_ident i ON i.leafnode_pk = s.leafnode_pk
  ASOF LEFT JOIN hx.leafnode_opts o ON o.leafnode_pk = s.leafnode_pk AND s.epoch >= o.epoch
  WHERE s.epoch BETWEEN ep_from AND ep_to
),
levels AS (
  SELECT leafnode_pk, count(DISTINCT compression) FILTER (WHERE starts_with(compression, 's2_')) AS s2_levels
  FROM leafs GROUP BY leafnode_pk
),
latest AS (SELECT server_pk, max(epoch) AS epoch FROM leafs GROUP BY server_pk),
counted AS (
  SELECT l.epoch, l.server_pk, count(*) AS leafnodes,
         count(*) FILTER (WHERE l.compression IN ('s2_auto', 's2_uncompressed') OR v.s2_levels > 1) AS auto_leafnodes
  FROM leafs l
  JOIN latest t ON t.server_pk = l.server_pk AND t.epoch = l.epoch
  JOIN levels v ON v.leafnode_pk = l.leafnode_pk
  GROUP BY l.epoch, l.server_pk
)
SELECT c.epoch, c.server_pk AS entity_pk, sv.name AS entity_name, NULL::VARCHAR AS entity_key, sv.name AS server,
       'info' AS severity, c.leafnodes, c.auto_leafnodes
FROM counted c
JOIN hx.server_ident sv ON sv.server_pk = c.server_pk
WHERE c.leafnodes >= p_min_leafs AND c.auto_leafnodes > 0`,
};
