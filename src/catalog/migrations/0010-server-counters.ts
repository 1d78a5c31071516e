/**
 * Two VARZ counters 2.12 added (nats-monitoring.md §3.2): connections found stale (no PONG
 * in time) and times a fast producer was stalled to let its slow readers catch up. They are
 * deltas worth alerting on (server-012, server-013); NULL for servers that do not report them,
 * so an older server reads as "unknown", not as zero.
 */
export const migration = {
  version: 10,
  name: "server stale-connection and stalled-client counters",
  sql: [
    "ALTER TABLE hx.server_stats ADD COLUMN stale_connections BIGINT;",
    "ALTER TABLE hx.server_stats ADD COLUMN stalled_clients BIGINT;",
    "COMMENT ON COLUMN hx.server_stats.stale_connections IS 'Connections closed as stale: no PONG to the server''s pings in time (counter; VARZ 2.12+, NULL before).';",
    "COMMENT ON COLUMN hx.server_stats.stalled_clients IS 'Times a producer was stalled because a reader could not keep up (counter; VARZ 2.12+, NULL before).';",
  ].join("\n"),
};
