/**
 * JetStream API requests in flight per server (JSZ `api.inflight`, present in 2.9 and later
 * but left out of the reply while it is 0): the backlog check jetstream-005 reads it.
 */
export const migration = {
  version: 10,
  name: "JetStream API requests in flight per server",
  sql: [
    "ALTER TABLE hx.server_stats ADD COLUMN js_api_inflight BIGINT;",
    "COMMENT ON COLUMN hx.server_stats.js_api_inflight IS 'JetStream API requests in flight on this server: received and not yet answered (JSZ api.inflight, 0 when the reply leaves it out); NULL without a JSZ reply.';",
  ].join("\n"),
};
