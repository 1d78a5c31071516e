/**
 * The first schema: epochs, and servers, streams and consumers in the _ident / _opts /
 * _stats shape (architecture.md §4). Stats tables are written in epoch order and keyed
 * (epoch, pk), so DuckDB's zone maps prune by time and row groups stay compact.
 */
export const migration = {
  version: 1,
  name: "epochs, servers, streams, consumers",
  sql: `
CREATE SCHEMA IF NOT EXISTS hx;
CREATE SCHEMA IF NOT EXISTS checks;
CREATE SCHEMA IF NOT EXISTS contexts;

CREATE TABLE hx.epochs (
  epoch TIMESTAMPTZ PRIMARY KEY,
  system_id VARCHAR NOT NULL,
  finished_at TIMESTAMPTZ,
  folded_at TIMESTAMPTZ NOT NULL,
  marker_seq UBIGINT NOT NULL UNIQUE,
  servers_expected VARCHAR[] NOT NULL,
  servers_answered VARCHAR[] NOT NULL,
  parts INTEGER NOT NULL,
  bytes BIGINT NOT NULL,
  fold_ms DOUBLE NOT NULL,
  errors VARCHAR[] NOT NULL
);
COMMENT ON TABLE hx.epochs IS 'One row per folded epoch: a complete scrape of the system, named by its start time.';
COMMENT ON COLUMN hx.epochs.epoch IS 'Start time of the scrape; the name of the epoch.';
COMMENT ON COLUMN hx.epochs.system_id IS 'Id of the monitored system.';
COMMENT ON COLUMN hx.epochs.finished_at IS 'When the scraper finished gathering and wrote the commit marker.';
COMMENT ON COLUMN hx.epochs.folded_at IS 'When the catalog committed the epoch.';
COMMENT ON COLUMN hx.epochs.marker_seq IS 'Scrape-stream sequence of the commit marker; an epoch is folded once per marker.';
COMMENT ON COLUMN hx.epochs.servers_expected IS 'Servers expected to answer (seen in earlier epochs or now).';
COMMENT ON COLUMN hx.epochs.servers_answered IS 'Servers that answered in this epoch; expected but missing ones are not read as gone.';
COMMENT ON COLUMN hx.epochs.parts IS 'Number of replies (server x source) in the epoch.';
COMMENT ON COLUMN hx.epochs.bytes IS 'Bytes received from the monitored servers for this epoch, as sent (compressed when gzip).';
COMMENT ON COLUMN hx.epochs.fold_ms IS 'Milliseconds the fold into DuckDB took.';
COMMENT ON COLUMN hx.epochs.errors IS 'Problems met in this epoch: error replies, unreadable parts, unsupported sources.';

CREATE TABLE hx.server_ident (
  server_pk INTEGER PRIMARY KEY,
  name VARCHAR NOT NULL UNIQUE,
  cluster VARCHAR,
  first_epoch TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE hx.server_ident IS 'Every server ever seen, keyed by name: server ids change on restart, names do not.';
COMMENT ON COLUMN hx.server_ident.server_pk IS 'Stable integer key of the server.';
COMMENT ON COLUMN hx.server_ident.name IS 'Server name (server_name in its configuration).';
COMMENT ON COLUMN hx.server_ident.cluster IS 'Cluster the server belonged to when first seen.';
COMMENT ON COLUMN hx.server_ident.first_epoch IS 'Epoch in which the server was first seen.';

CREATE TABLE hx.server_opts (
  server_pk INTEGER NOT NULL,
  epoch TIMESTAMPTZ NOT NULL,
  version VARCHAR,
  host VARCHAR,
  port INTEGER,
  cluster VARCHAR,
  max_payload BIGINT,
  max_connections BIGINT,
  max_pending BIGINT,
  auth_required BOOLEAN,
  tls_required BOOLEAN,
  jetstream BOOLEAN,
  js_max_memory BIGINT,
  js_max_storage BIGINT,
  js_domain VARCHAR,
  PRIMARY KEY (server_pk, epoch)
);
COMMENT ON TABLE hx.server_opts IS 'Server configuration as reported by VARZ; a row is written only when it changes.';
COMMENT ON COLUMN hx.server_opts.server_pk IS 'Server (hx.server_ident).';
COMMENT ON COLUMN hx.server_opts.epoch IS 'First epoch in which this configuration was seen; it holds until the next row.';
COMMENT ON COLUMN hx.server_opts.version IS 'nats-server version.';
COMMENT ON COLUMN hx.server_opts.host IS 'Client listen host.';
COMMENT ON COLUMN hx.server_opts.port IS 'Client listen port.';
COMMENT ON COLUMN hx.server_opts.cluster IS 'Cluster name (VARZ cluster.name).';
COMMENT ON COLUMN hx.server_opts.max_payload IS 'Largest message payload accepted, bytes.';
COMMENT ON COLUMN hx.server_opts.max_connections IS 'Client connection limit.';
COMMENT ON COLUMN hx.server_opts.max_pending IS 'Largest pending buffer per client, bytes.';
COMMENT ON COLUMN hx.server_opts.auth_required IS 'Whether clients must authenticate.';
COMMENT ON COLUMN hx.server_opts.tls_required IS 'Whether clients must use TLS.';
COMMENT ON COLUMN hx.server_opts.jetstream IS 'Whether JetStream is enabled on the server.';
COMMENT ON COLUMN hx.server_opts.js_max_memory IS 'JetStream memory storage limit, bytes.';
COMMENT ON COLUMN hx.server_opts.js_max_storage IS 'JetStream file storage limit, bytes.';
COMMENT ON COLUMN hx.server_opts.js_domain IS 'JetStream domain, if any.';

CREATE TABLE hx.server_stats (
  epoch TIMESTAMPTZ NOT NULL,
  server_pk INTEGER NOT NULL,
  server_id VARCHAR,
  start TIMESTAMPTZ,
  cpu DOUBLE,
  mem BIGINT,
  cores INTEGER,
  connections BIGINT,
  total_connections BIGINT,
  subscriptions BIGINT,
  slow_consumers BIGINT,
  in_msgs BIGINT,
  out_msgs BIGINT,
  in_bytes BIGINT,
  out_bytes BIGINT,
  routes INTEGER,
  remotes INTEGER,
  leafnodes INTEGER,
  js_memory BIGINT,
  js_storage BIGINT,
  js_streams BIGINT,
  js_consumers BIGINT,
  js_api_total BIGINT,
  js_api_errors BIGINT,
  meta_leader VARCHAR,
  healthz_status VARCHAR,
  healthz_error VARCHAR,
  PRIMARY KEY (epoch, server_pk)
);
COMMENT ON TABLE hx.server_stats IS 'Per-epoch measurements of each server that answered, from VARZ, JSZ and HEALTHZ.';
COMMENT ON COLUMN hx.server_stats.epoch IS 'Epoch these figures belong to.';
COMMENT ON COLUMN hx.server_stats.server_pk IS 'Server (hx.server_ident).';
COMMENT ON COLUMN hx.server_stats.server_id IS 'Server id in this epoch (changes on restart).';
COMMENT ON COLUMN hx.server_stats.start IS 'When the server process started.';
COMMENT ON COLUMN hx.server_stats.cpu IS 'CPU use, percent of one core (can exceed 100).';
COMMENT ON COLUMN hx.server_stats.mem IS 'Resident memory, bytes.';
COMMENT ON COLUMN hx.server_stats.cores IS 'CPU cores the server sees.';
COMMENT ON COLUMN hx.server_stats.connections IS 'Current client connections.';
COMMENT ON COLUMN hx.server_stats.total_connections IS 'Client connections since start (counter).';
COMMENT ON COLUMN hx.server_stats.subscriptions IS 'Current subscriptions.';
COMMENT ON COLUMN hx.server_stats.slow_consumers IS 'Slow consumers since start (counter).';
COMMENT ON COLUMN hx.server_stats.in_msgs IS 'Messages received since start (counter).';
COMMENT ON COLUMN hx.server_stats.out_msgs IS 'Messages sent since start (counter).';
COMMENT ON COLUMN hx.server_stats.in_bytes IS 'Bytes received since start (counter).';
COMMENT ON COLUMN hx.server_stats.out_bytes IS 'Bytes sent since start (counter).';
COMMENT ON COLUMN hx.server_stats.routes IS 'Route connections.';
COMMENT ON COLUMN hx.server_stats.remotes IS 'Remote servers connected by routes.';
COMMENT ON COLUMN hx.server_stats.leafnodes IS 'Leafnode connections.';
COMMENT ON COLUMN hx.server_stats.js_memory IS 'JetStream memory storage used, bytes.';
COMMENT ON COLUMN hx.server_stats.js_storage IS 'JetStream file storage used, bytes.';
COMMENT ON COLUMN hx.server_stats.js_streams IS 'Streams on this server, followers included.';
COMMENT ON COLUMN hx.server_stats.js_consumers IS 'Consumers on this server, followers included.';
COMMENT ON COLUMN hx.server_stats.js_api_total IS 'JetStream API requests since start (counter).';
COMMENT ON COLUMN hx.server_stats.js_api_errors IS 'JetStream API errors since start (counter).';
COMMENT ON COLUMN hx.server_stats.meta_leader IS 'Meta-group leader as this server sees it; NULL when it sees none.';
COMMENT ON COLUMN hx.server_stats.healthz_status IS 'HEALTHZ status (ok, unavailable, error).';
COMMENT ON COLUMN hx.server_stats.healthz_error IS 'HEALTHZ error text when not ok.';

CREATE TABLE hx.stream_ident (
  stream_pk INTEGER PRIMARY KEY,
  account VARCHAR NOT NULL,
  name VARCHAR NOT NULL,
  created TIMESTAMPTZ,
  first_epoch TIMESTAMPTZ NOT NULL,
  UNIQUE (account, name)
);
COMMENT ON TABLE hx.stream_ident IS 'Every JetStream stream ever seen, keyed by account and name.';
COMMENT ON COLUMN hx.stream_ident.stream_pk IS 'Stable integer key of the stream.';
COMMENT ON COLUMN hx.stream_ident.account IS 'Account the stream lives in.';
COMMENT ON COLUMN hx.stream_ident.name IS 'Stream name.';
COMMENT ON COLUMN hx.stream_ident.created IS 'When the stream was created.';
COMMENT ON COLUMN hx.stream_ident.first_epoch IS 'Epoch in which the stream was first seen.';

CREATE TABLE hx.stream_opts (
  stream_pk INTEGER NOT NULL,
  epoch TIMESTAMPTZ NOT NULL,
  subjects VARCHAR[],
  retention VARCHAR,
  storage VARCHAR,
  replicas INTEGER,
  max_consumers BIGINT,
  max_msgs BIGINT,
  max_bytes BIGINT,
  max_age_ns BIGINT,
  max_msgs_per_subject BIGINT,
  max_msg_size BIGINT,
  discard VARCHAR,
  duplicate_window_ns BIGINT,
  allow_direct BOOLEAN,
  sealed BOOLEAN,
  PRIMARY KEY (stream_pk, epoch)
);
COMMENT ON TABLE hx.stream_opts IS 'Stream configuration from the leader''s JSZ; a row is written only when it changes.';
COMMENT ON COLUMN hx.stream_opts.stream_pk IS 'Stream (hx.stream_ident).';
COMMENT ON COLUMN hx.stream_opts.epoch IS 'First epoch with this configuration; it holds until the next row.';
COMMENT ON COLUMN hx.stream_opts.subjects IS 'Subjects the stream captures.';
COMMENT ON COLUMN hx.stream_opts.retention IS 'Retention policy: limits, interest or workqueue.';
COMMENT ON COLUMN hx.stream_opts.storage IS 'Storage: file or memory.';
COMMENT ON COLUMN hx.stream_opts.replicas IS 'Number of replicas.';
COMMENT ON COLUMN hx.stream_opts.max_consumers IS 'Consumer limit; -1 unlimited.';
COMMENT ON COLUMN hx.stream_opts.max_msgs IS 'Message limit; -1 unlimited.';
COMMENT ON COLUMN hx.stream_opts.max_bytes IS 'Byte limit; -1 unlimited.';
COMMENT ON COLUMN hx.stream_opts.max_age_ns IS 'Maximum message age, nanoseconds; 0 unlimited.';
COMMENT ON COLUMN hx.stream_opts.max_msgs_per_subject IS 'Messages kept per subject; -1 unlimited.';
COMMENT ON COLUMN hx.stream_opts.max_msg_size IS 'Largest message accepted, bytes; -1 unlimited.';
COMMENT ON COLUMN hx.stream_opts.discard IS 'Discard policy when full: old or new.';
COMMENT ON COLUMN hx.stream_opts.duplicate_window_ns IS 'Window for msg-id deduplication, nanoseconds.';
COMMENT ON COLUMN hx.stream_opts.allow_direct IS 'Whether direct get is allowed.';
COMMENT ON COLUMN hx.stream_opts.sealed IS 'Whether the stream is sealed.';

CREATE TABLE hx.stream_stats (
  epoch TIMESTAMPTZ NOT NULL,
  stream_pk INTEGER NOT NULL,
  leader_server_pk INTEGER,
  messages UBIGINT,
  bytes UBIGINT,
  first_seq UBIGINT,
  last_seq UBIGINT,
  num_subjects BIGINT,
  num_deleted BIGINT,
  consumer_count INTEGER,
  replicas_offline INTEGER,
  replicas_lagging INTEGER,
  PRIMARY KEY (epoch, stream_pk)
);
COMMENT ON TABLE hx.stream_stats IS 'Per-epoch state of each stream, taken only from its leader''s reply (followers are stale).';
COMMENT ON COLUMN hx.stream_stats.epoch IS 'Epoch these figures belong to.';
COMMENT ON COLUMN hx.stream_stats.stream_pk IS 'Stream (hx.stream_ident).';
COMMENT ON COLUMN hx.stream_stats.leader_server_pk IS 'Server that led the stream (NULL for a non-clustered stream).';
COMMENT ON COLUMN hx.stream_stats.messages IS 'Messages stored.';
COMMENT ON COLUMN hx.stream_stats.bytes IS 'Bytes stored.';
COMMENT ON COLUMN hx.stream_stats.first_seq IS 'First sequence stored.';
COMMENT ON COLUMN hx.stream_stats.last_seq IS 'Last sequence stored.';
COMMENT ON COLUMN hx.stream_stats.num_subjects IS 'Distinct subjects stored.';
COMMENT ON COLUMN hx.stream_stats.num_deleted IS 'Interior deleted messages.';
COMMENT ON COLUMN hx.stream_stats.consumer_count IS 'Consumers of the stream.';
COMMENT ON COLUMN hx.stream_stats.replicas_offline IS 'Replicas the leader reports offline.';
COMMENT ON COLUMN hx.stream_stats.replicas_lagging IS 'Replicas the leader reports not current or lagging.';

CREATE TABLE hx.consumer_ident (
  consumer_pk INTEGER PRIMARY KEY,
  stream_pk INTEGER NOT NULL,
  name VARCHAR NOT NULL,
  created TIMESTAMPTZ,
  first_epoch TIMESTAMPTZ NOT NULL,
  UNIQUE (stream_pk, name)
);
COMMENT ON TABLE hx.consumer_ident IS 'Every JetStream consumer ever seen, keyed by stream and name.';
COMMENT ON COLUMN hx.consumer_ident.consumer_pk IS 'Stable integer key of the consumer.';
COMMENT ON COLUMN hx.consumer_ident.stream_pk IS 'Stream the consumer reads (hx.stream_ident).';
COMMENT ON COLUMN hx.consumer_ident.name IS 'Consumer name (durable name or generated name).';
COMMENT ON COLUMN hx.consumer_ident.created IS 'When the consumer was created.';
COMMENT ON COLUMN hx.consumer_ident.first_epoch IS 'Epoch in which the consumer was first seen.';

CREATE TABLE hx.consumer_opts (
  consumer_pk INTEGER NOT NULL,
  epoch TIMESTAMPTZ NOT NULL,
  durable BOOLEAN,
  deliver_policy VARCHAR,
  ack_policy VARCHAR,
  ack_wait_ns BIGINT,
  max_deliver BIGINT,
  max_ack_pending BIGINT,
  filter_subject VARCHAR,
  replay_policy VARCHAR,
  push BOOLEAN,
  replicas INTEGER,
  PRIMARY KEY (consumer_pk, epoch)
);
COMMENT ON TABLE hx.consumer_opts IS 'Consumer configuration from the leader''s JSZ; a row is written only when it changes.';
COMMENT ON COLUMN hx.consumer_opts.consumer_pk IS 'Consumer (hx.consumer_ident).';
COMMENT ON COLUMN hx.consumer_opts.epoch IS 'First epoch with this configuration; it holds until the next row.';
COMMENT ON COLUMN hx.consumer_opts.durable IS 'Whether the consumer is durable.';
COMMENT ON COLUMN hx.consumer_opts.deliver_policy IS 'Where delivery starts: all, last, new, by_start_sequence, …';
COMMENT ON COLUMN hx.consumer_opts.ack_policy IS 'Acknowledgement policy: none, all or explicit.';
COMMENT ON COLUMN hx.consumer_opts.ack_wait_ns IS 'How long the server waits for an ack before redelivering, nanoseconds.';
COMMENT ON COLUMN hx.consumer_opts.max_deliver IS 'Delivery attempts per message; -1 unlimited.';
COMMENT ON COLUMN hx.consumer_opts.max_ack_pending IS 'Unacknowledged messages allowed in flight.';
COMMENT ON COLUMN hx.consumer_opts.filter_subject IS 'Subject filter, if any.';
COMMENT ON COLUMN hx.consumer_opts.replay_policy IS 'Replay policy: instant or original.';
COMMENT ON COLUMN hx.consumer_opts.push IS 'Whether the consumer pushes to a deliver subject (else pull).';
COMMENT ON COLUMN hx.consumer_opts.replicas IS 'Consumer replicas; 0 means as many as the stream.';

CREATE TABLE hx.consumer_stats (
  epoch TIMESTAMPTZ NOT NULL,
  consumer_pk INTEGER NOT NULL,
  leader_server_pk INTEGER,
  num_pending UBIGINT,
  num_ack_pending BIGINT,
  num_redelivered BIGINT,
  num_waiting BIGINT,
  delivered_stream_seq UBIGINT,
  ack_floor_stream_seq UBIGINT,
  last_active TIMESTAMPTZ,
  push_bound BOOLEAN,
  PRIMARY KEY (epoch, consumer_pk)
);
COMMENT ON TABLE hx.consumer_stats IS 'Per-epoch state of each consumer, taken only from its leader''s reply.';
COMMENT ON COLUMN hx.consumer_stats.epoch IS 'Epoch these figures belong to.';
COMMENT ON COLUMN hx.consumer_stats.consumer_pk IS 'Consumer (hx.consumer_ident).';
COMMENT ON COLUMN hx.consumer_stats.leader_server_pk IS 'Server that led the consumer (NULL for a non-clustered one).';
COMMENT ON COLUMN hx.consumer_stats.num_pending IS 'Messages in the stream not yet delivered to the consumer.';
COMMENT ON COLUMN hx.consumer_stats.num_ack_pending IS 'Delivered messages awaiting acknowledgement.';
COMMENT ON COLUMN hx.consumer_stats.num_redelivered IS 'Messages redelivered at least once.';
COMMENT ON COLUMN hx.consumer_stats.num_waiting IS 'Pull requests waiting.';
COMMENT ON COLUMN hx.consumer_stats.delivered_stream_seq IS 'Last stream sequence delivered.';
COMMENT ON COLUMN hx.consumer_stats.ack_floor_stream_seq IS 'Stream sequence below which everything is acknowledged.';
COMMENT ON COLUMN hx.consumer_stats.last_active IS 'Last delivery time.';
COMMENT ON COLUMN hx.consumer_stats.push_bound IS 'For a push consumer, whether a subscriber is bound.';
`,
};
