import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

/**
 * A sum over every server's replicas, so the finding belongs to no server (as accounts-001's
 * totals): a server missing from the epoch lowers the sum, and the findings diff holds a
 * finding of no server until every expected server answered in full, where one labelled with
 * the meta leader, which did answer, resolved and fired again with a new start.
 */
export const meta005: Check = {
  code: "meta-005",
  name: "Meta State Growth",
  description:
    "The JetStream meta group tracks more stream and consumer replicas than the threshold. Every replica of every stream and consumer in the domain is part of the meta state that each meta peer keeps, snapshots and replays on restart; a large state makes meta snapshots, leader elections and server restarts slow and JetStream API calls slower.",
  remediation:
    "Find where the assets are with `nats server report jetstream` and `nats stream report`. Remove unused streams and consumers, give ephemeral and idle consumers an inactive_threshold, use R1 where replication is not needed, and consolidate many small streams into fewer streams with subject filters. Raise the threshold if the size is planned and the servers cope.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_max_assets",
      default: 5000,
      description: "Stream plus consumer replicas above which the meta state is too large.",
    },
  ],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    { name: "asset_replicas", type: "BIGINT", description: "Stream plus consumer replicas in the domain." },
    { name: "stream_replicas", type: "BIGINT", description: "Stream replicas in the domain." },
    { name: "consumer_replicas", type: "BIGINT", description: "Consumer replicas in the domain." },
    { name: "max_assets", type: "DOUBLE", description: "Threshold in force." },
  ],
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}, streams AS (
  SELECT r.epoch, s.domain, count(*) AS n
  FROM hx.stream_replica_stats r
  JOIN hx.stream_replica_ident ri ON ri.stream_replica_pk = r.stream_replica_pk
  JOIN hx.stream_ident s ON s.stream_pk = ri.stream_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to
  GROUP BY r.epoch, s.domain
), consumers AS (
  SELECT r.epoch, s.domain, count(*) AS n
  FROM hx.consumer_replica_stats r
  JOIN hx.consumer_replica_ident ri ON ri.consumer_replica_pk = r.consumer_replica_pk
  JOIN hx.consumer_ident c ON c.consumer_pk = ri.consumer_pk
  JOIN hx.stream_ident s ON s.stream_pk = c.stream_pk
  WHERE r.epoch BETWEEN ep_from AND ep_to
  GROUP BY r.epoch, s.domain
), totals AS (
  SELECT g.*, coalesce(st.n, 0) AS stream_n, coalesce(co.n, 0) AS consumer_n
  FROM meta_groups g
  LEFT JOIN streams st ON st.epoch = g.epoch AND st.domain = g.domain
  LEFT JOIN consumers co ON co.epoch = g.epoch AND co.domain = g.domain
)
SELECT t.epoch, t.meta_pk AS entity_pk, t.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'warning' AS severity, t.domain,
       CAST(t.stream_n + t.consumer_n AS BIGINT) AS asset_replicas, CAST(t.stream_n AS BIGINT) AS stream_replicas,
       CAST(t.consumer_n AS BIGINT) AS consumer_replicas, CAST(p_max_assets AS DOUBLE) AS max_assets
FROM totals t
WHERE t.stream_n + t.consumer_n > p_max_assets`,
};
