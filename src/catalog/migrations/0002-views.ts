/**
 * Convenience views for people: each kind's stats joined with its identity and the
 * configuration in force at that epoch (an ASOF join on the _opts validity start).
 */
export const migration = {
  version: 2,
  name: "servers, streams and consumers views",
  sql: `
CREATE VIEW hx.servers AS
SELECT s.epoch, i.name AS server, i.server_pk, o.cluster, o.version, s.* EXCLUDE (epoch, server_pk)
FROM hx.server_stats s
JOIN hx.server_ident i USING (server_pk)
ASOF LEFT JOIN hx.server_opts o ON s.server_pk = o.server_pk AND s.epoch >= o.epoch;
COMMENT ON VIEW hx.servers IS 'Per-epoch server figures with the server name, cluster and version in force.';

CREATE VIEW hx.streams AS
SELECT s.epoch, i.account, i.name AS stream, i.stream_pk, o.replicas, o.storage, o.retention, o.subjects,
       ls.name AS leader, s.* EXCLUDE (epoch, stream_pk)
FROM hx.stream_stats s
JOIN hx.stream_ident i USING (stream_pk)
LEFT JOIN hx.server_ident ls ON ls.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.stream_opts o ON s.stream_pk = o.stream_pk AND s.epoch >= o.epoch;
COMMENT ON VIEW hx.streams IS 'Per-epoch stream state (from the leader) with account, name, leader and the configuration in force.';

CREATE VIEW hx.consumers AS
SELECT s.epoch, si.account, si.name AS stream, i.name AS consumer, i.consumer_pk, i.stream_pk,
       o.ack_policy, o.filter_subject, ls.name AS leader, s.* EXCLUDE (epoch, consumer_pk)
FROM hx.consumer_stats s
JOIN hx.consumer_ident i USING (consumer_pk)
JOIN hx.stream_ident si ON si.stream_pk = i.stream_pk
LEFT JOIN hx.server_ident ls ON ls.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.consumer_opts o ON s.consumer_pk = o.consumer_pk AND s.epoch >= o.epoch;
COMMENT ON VIEW hx.consumers IS 'Per-epoch consumer state (from the leader) with its stream, leader and the configuration in force.';
`,
};
