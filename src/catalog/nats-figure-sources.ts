/**
 * What GET /metrics serves of a monitored system (nats-figures.ts reads them): each source is
 * one query over one epoch of the catalog, its labels and the families its rows give.
 */

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly counter?: true;
  /** SQL over the source's rows; NULL leaves the sample out. */
  readonly value: string;
}

export interface Source {
  /** "all" only: streams and consumers, whose series grow with the system's assets. */
  readonly assets?: true;
  /** A relation with an `epoch` column. */
  readonly from: string;
  readonly where?: string;
  /** Aggregates over the labels' groups. */
  readonly grouped?: true;
  /** Label name → SQL. */
  readonly labels: Readonly<Record<string, string>>;
  readonly families: readonly Family[];
}

const gauge = (name: string, value: string, help: string): Family => ({ name, value, help });
const counter = (name: string, value: string, help: string): Family => ({ name, value, help, counter: true });
/** A limit: left out where none is set (0 or -1). */
const limit = (name: string, column: string, help: string): Family =>
  gauge(name, `CASE WHEN ${column} > 0 THEN ${column} END`, help);
const js = (column: string) => `CASE WHEN jetstream THEN ${column} END`;
const seconds = (column: string) => `epoch_us(${column}) / 1e6`;

// The server's name, not its id: an id a server is not configured with changes when it restarts.
const SERVER = { server: "server", cluster: "cluster" };

/** What a route, gateway or leafnode connection reports: its RTT, backlog, traffic and interest. */
const link = (kind: "route" | "gateway" | "leafnode"): Family[] => [
  gauge(`nats_${kind}_rtt_seconds`, "rtt_ns / 1e9", `Round-trip time of the ${kind} connection.`),
  ...(kind === "leafnode"
    ? []
    : [
        gauge(
          `nats_${kind}_pending_bytes`,
          kind === "route" ? "pending_size" : "pending_bytes",
          "Bytes waiting to be written to it.",
        ),
      ]),
  gauge(`nats_${kind}_subscriptions`, "subscriptions", "Subscriptions (interest) over it."),
  counter(`nats_${kind}_received_messages_total`, "in_msgs", "Messages received over it."),
  counter(`nats_${kind}_sent_messages_total`, "out_msgs", "Messages sent over it."),
  counter(`nats_${kind}_received_bytes_total`, "in_bytes", "Bytes received over it."),
  counter(`nats_${kind}_sent_bytes_total`, "out_bytes", "Bytes sent over it."),
];
/** As hx.streams names an account: its JWT's name, else its key (or its name in configuration mode). */
const ACCOUNT = { account: "account", account_name: "coalesce(nullif(name_tag, ''), account)" };
const STREAM = { domain: "domain", account: "account", account_name: "account_name", stream: "stream" };

export const SOURCES: readonly Source[] = [
  {
    from: "(SELECT epoch, unnest(list_distinct(servers_expected || servers_answered)) AS server, servers_answered FROM hx.epochs)",
    labels: { server: "server" },
    families: [
      gauge(
        "nats_server_up",
        "list_contains(servers_answered, server)::INTEGER",
        "1 when the server answered the epoch's scrape; 0 when a server the system lists did not.",
      ),
    ],
  },
  {
    from: "hx.servers",
    labels: { ...SERVER, server_id: "server_id", version: "version", go: "go", js_domain: "js_domain" },
    families: [
      gauge("nats_server_info", "1", "The server's id, version, Go version and JetStream domain (value 1)."),
    ],
  },
  {
    from: "hx.servers",
    labels: SERVER,
    families: [
      gauge("nats_server_start_timestamp_seconds", seconds("start"), "When the server started."),
      gauge("nats_server_cpu_percent", "cpu", "CPU the server used, percent of one core."),
      gauge("nats_server_memory_bytes", "mem", "Resident memory of the server, bytes."),
      gauge("nats_server_connections", "connections", "Client connections."),
      limit("nats_server_max_connections", "max_connections", "Client connections the server allows."),
      gauge("nats_server_subscriptions", "subscriptions", "Subscriptions."),
      gauge("nats_server_routes", "routes", "Route connections."),
      gauge("nats_server_leafnodes", "leafnodes", "Leafnode connections."),
      limit("nats_server_max_payload_bytes", "max_payload", "Largest message payload the server accepts."),
      counter("nats_server_connections_total", "total_connections", "Client connections accepted."),
      counter("nats_server_received_messages_total", "in_msgs", "Messages received."),
      counter("nats_server_sent_messages_total", "out_msgs", "Messages sent."),
      counter("nats_server_received_bytes_total", "in_bytes", "Bytes received."),
      counter("nats_server_sent_bytes_total", "out_bytes", "Bytes sent."),
      counter("nats_server_slow_consumers_total", "slow_consumers", "Slow consumers the server cut off."),
      counter(
        "nats_server_stale_connections_total",
        "stale_connections",
        "Connections closed for missing pings.",
      ),
      counter("nats_server_stalled_clients_total", "stalled_clients", "Times a client's writes stalled."),
      gauge(
        "nats_server_healthy",
        "CASE WHEN healthz_status = 'ok' THEN 1 WHEN healthz_status IS NOT NULL THEN 0 END",
        "1 when the server's health check (HEALTHZ) passes, 0 when it fails.",
      ),
      gauge("nats_server_jetstream_memory_bytes", js("js_memory"), "JetStream memory storage used."),
      gauge("nats_server_jetstream_storage_bytes", js("js_storage"), "JetStream file storage used."),
      limit("nats_server_jetstream_max_memory_bytes", js("js_max_memory"), "JetStream memory storage limit."),
      limit("nats_server_jetstream_max_storage_bytes", js("js_max_storage"), "JetStream file storage limit."),
      gauge("nats_server_jetstream_streams", js("js_streams"), "Streams the server holds a replica of."),
      gauge(
        "nats_server_jetstream_consumers",
        js("js_consumers"),
        "Consumers the server holds a replica of.",
      ),
      gauge("nats_server_jetstream_messages", js("js_messages"), "Messages in the server's stream replicas."),
      gauge("nats_server_jetstream_bytes", js("js_bytes"), "Bytes in the server's stream replicas."),
      counter("nats_server_jetstream_api_requests_total", js("js_api_total"), "JetStream API requests."),
      counter("nats_server_jetstream_api_errors_total", js("js_api_errors"), "JetStream API errors."),
      gauge(
        "nats_server_jetstream_api_inflight",
        js("js_api_inflight"),
        "JetStream API requests in flight (2.10+).",
      ),
      gauge(
        "nats_server_jetstream_meta_leader",
        js("(meta_leader = server)::INTEGER"),
        "1 on the server that leads the JetStream meta group, 0 on the others.",
      ),
    ],
  },
  {
    from: "hx.accounts",
    labels: { ...ACCOUNT, server: "server" },
    families: [
      gauge("nats_account_connections", "conns", "Client connections of the account on the server."),
      gauge("nats_account_leafnodes", "leafnodes", "Leafnode connections of the account on the server."),
      gauge(
        "nats_account_subscriptions",
        "coalesce(num_subscriptions, subscriptions)",
        "Subscriptions of the account on the server.",
      ),
      counter(
        "nats_account_sent_messages_total",
        "sent_msgs",
        "Messages the server sent to the account's connections.",
      ),
      counter(
        "nats_account_sent_bytes_total",
        "sent_bytes",
        "Bytes the server sent to the account's connections.",
      ),
      counter(
        "nats_account_received_messages_total",
        "received_msgs",
        "Messages the server received from the account's connections.",
      ),
      counter(
        "nats_account_received_bytes_total",
        "received_bytes",
        "Bytes the server received from the account's connections.",
      ),
      counter(
        "nats_account_slow_consumers_total",
        "slow_consumers",
        "Slow consumers of the account the server cut off.",
      ),
    ],
  },
  {
    // JetStream usage is domain-wide, on the row of the server that speaks for it (hx.account_stats).
    from: "hx.accounts",
    where: "js_domain IS NOT NULL",
    grouped: true,
    labels: { ...ACCOUNT, domain: "js_domain" },
    families: [
      gauge(
        "nats_account_jetstream_memory_bytes",
        "sum(js_memory)",
        "JetStream memory storage the account uses.",
      ),
      gauge(
        "nats_account_jetstream_storage_bytes",
        "sum(js_storage)",
        "JetStream file storage the account uses.",
      ),
      gauge("nats_account_jetstream_streams", "max(js_streams)", "Streams of the account."),
      gauge("nats_account_jetstream_consumers", "max(js_consumers)", "Consumers of the account."),
      counter(
        "nats_account_jetstream_api_requests_total",
        "sum(js_api_total)",
        "JetStream API requests of the account.",
      ),
      counter(
        "nats_account_jetstream_api_errors_total",
        "sum(js_api_errors)",
        "JetStream API errors of the account.",
      ),
    ],
  },
  {
    // A route pool (2.10+) has several connections to one remote, and a pinned account one of its own.
    from: "hx.routes",
    labels: { ...SERVER, remote: "remote", pool_index: "pool_index", account: "account" },
    families: link("route"),
  },
  {
    from: "hx.gateways",
    labels: {
      ...SERVER,
      gateway: "gateway",
      direction: "direction",
      remote_server: "remote_server",
    },
    families: [
      gauge(
        "nats_gateway_connected",
        "connected::INTEGER",
        "1 when the gateway connection is up, 0 when a configured gateway is not connected.",
      ),
      ...link("gateway"),
    ],
  },
  {
    // The other end's name from 2.9.15, its address before.
    from: "hx.leafnodes",
    labels: { ...SERVER, account: "account", remote: "coalesce(name, ip)" },
    families: link("leafnode"),
  },
  {
    assets: true,
    from: "hx.streams",
    labels: { ...STREAM, leader: "leader", cluster: "cluster", storage: "storage", retention: "retention" },
    families: [
      gauge("nats_stream_info", "1", "The stream's leader, cluster, storage and retention (value 1)."),
    ],
  },
  {
    assets: true,
    from: "hx.streams",
    labels: STREAM,
    families: [
      gauge("nats_stream_messages", "messages", "Messages in the stream (its leader's state)."),
      gauge("nats_stream_bytes", "bytes", "Bytes in the stream."),
      gauge("nats_stream_subjects", "num_subjects", "Subjects with messages in the stream."),
      gauge("nats_stream_deleted_messages", "num_deleted", "Messages deleted from the middle of the stream."),
      gauge("nats_stream_first_seq", "first_seq", "Sequence of the stream's first message."),
      gauge(
        "nats_stream_last_seq",
        "last_seq",
        "Sequence of the stream's last message (rate() of it: publishes).",
      ),
      gauge(
        "nats_stream_last_message_timestamp_seconds",
        seconds("last_ts"),
        "When the last message was stored.",
      ),
      gauge("nats_stream_consumers", "consumer_count", "Consumers of the stream."),
      gauge("nats_stream_replicas", "replicas", "Replicas the stream is configured with."),
      gauge("nats_stream_replicas_offline", "replicas_offline", "Replicas of the stream that are offline."),
      gauge(
        "nats_stream_replicas_lagging",
        "replicas_lagging",
        "Replicas of the stream that are not current.",
      ),
      gauge(
        "nats_stream_mirror_lag_messages",
        "mirror_lag",
        "Messages the stream's mirror is behind its origin.",
      ),
      gauge(
        "nats_stream_sources_lag_messages",
        "sources_max_lag",
        "Messages the most lagging source is behind.",
      ),
      limit("nats_stream_max_messages", "max_msgs", "Message limit of the stream."),
      limit("nats_stream_max_bytes", "max_bytes", "Byte limit of the stream."),
      limit("nats_stream_max_consumers", "max_consumers", "Consumer limit of the stream."),
    ],
  },
  {
    assets: true,
    from: "hx.consumers",
    labels: { ...STREAM, consumer: "consumer", leader: "leader", ack_policy: "ack_policy" },
    families: [gauge("nats_consumer_info", "1", "The consumer's leader and ack policy (value 1).")],
  },
  {
    assets: true,
    from: "hx.consumers",
    labels: { ...STREAM, consumer: "consumer" },
    families: [
      gauge(
        "nats_consumer_pending_messages",
        "num_pending",
        "Messages of the stream the consumer has yet to deliver.",
      ),
      gauge(
        "nats_consumer_ack_pending_messages",
        "num_ack_pending",
        "Messages delivered and not yet acknowledged.",
      ),
      limit(
        "nats_consumer_max_ack_pending",
        "max_ack_pending",
        "Unacknowledged messages the consumer allows.",
      ),
      gauge(
        "nats_consumer_redelivered_messages",
        "num_redelivered",
        "Messages delivered more than once, pending.",
      ),
      gauge("nats_consumer_waiting_pulls", "num_waiting", "Pull requests waiting for messages."),
      gauge("nats_consumer_delivered_stream_seq", "delivered_stream_seq", "Stream sequence last delivered."),
      gauge(
        "nats_consumer_ack_floor_stream_seq",
        "ack_floor_stream_seq",
        "Stream sequence acknowledged up to.",
      ),
      gauge(
        "nats_consumer_last_active_timestamp_seconds",
        seconds("last_active"),
        "When a message was last delivered.",
      ),
      gauge(
        "nats_consumer_replicas_offline",
        "replicas_offline",
        "Replicas of the consumer that are offline.",
      ),
      gauge(
        "nats_consumer_replicas_lagging",
        "replicas_lagging",
        "Replicas of the consumer that are not current.",
      ),
    ],
  },
];
