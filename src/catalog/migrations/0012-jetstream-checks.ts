/**
 * Two figures the JetStream checks read: the JetStream API requests in flight per server (JSZ
 * `api.inflight`, present in 2.9 and later but left out of the reply while it is 0), and each
 * stream replica's own view of its peers. Every server lists the peers of the streams it holds
 * with an `offline` flag, leader or not; when quorum is lost there is soon no leader to ask
 * (nats-server steps it down), and the surviving replicas' view is the one left.
 */
export const migration = {
  version: 12,
  name: "JetStream API requests in flight; stream replicas' own view of offline peers",
  sql: [
    "ALTER TABLE hx.server_stats ADD COLUMN js_api_inflight BIGINT;",
    "COMMENT ON COLUMN hx.server_stats.js_api_inflight IS 'JetStream API requests in flight on this server: received and not yet answered (JSZ api.inflight, 0 when the reply leaves it out); NULL without a JSZ reply.';",
    "ALTER TABLE hx.stream_replica_stats ADD COLUMN peers_offline_seen INTEGER;",
    "COMMENT ON COLUMN hx.stream_replica_stats.peers_offline_seen IS 'Own copy: peers of the group this server lists offline (its cluster.replicas[].offline): its own view, there even when no leader answers; NULL when it did not answer.';",
  ].join("\n"),
};
