/**
 * Each consumer replica's own view of its peers, as 0012 added for streams: every server
 * lists the peers of the consumers it holds with an `offline` flag, leader or not. Once a
 * consumer loses quorum its leader steps down (or was one of the servers that went away),
 * and what the surviving replicas say is all there is to tell the quorum is lost.
 *
 * hx.stream_replicas and hx.consumer_replicas are created again from their definitions:
 * DuckDB fixes a view's `s.*` when it is created, so neither showed the column.
 */
import { REPLICATION_VIEWS } from "./replication-views.ts";

const [STREAM_REPLICAS_VIEW, CONSUMER_REPLICAS_VIEW] = REPLICATION_VIEWS;

export const migration = {
  version: 16,
  name: "consumer replicas' own view of offline peers; replica views show the own-view columns",
  sql: [
    "ALTER TABLE hx.consumer_replica_stats ADD COLUMN peers_offline_seen INTEGER;",
    "COMMENT ON COLUMN hx.consumer_replica_stats.peers_offline_seen IS 'Own copy: peers of the group this server lists offline (its cluster.replicas[].offline): its own view, there even when no leader answers; NULL when it did not answer.';",
    "DROP VIEW hx.stream_replicas;",
    STREAM_REPLICAS_VIEW!,
    "DROP VIEW hx.consumer_replicas;",
    CONSUMER_REPLICAS_VIEW!,
  ].join("\n\n"),
};
