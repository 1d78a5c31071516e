/**
 * Accounts, client connections, per-server subscription (sublist) figures and main.ips.
 *
 * Accounts are keyed by name: in operator mode an account's name is its public key, and a
 * plain configured name otherwise; both are stable. hx.account_stats has one row per
 * account and server (ACCOUNT.PING.STATZ answers per server), and the account's JetStream
 * usage sits on the row of the one server chosen to speak for it in each JetStream domain.
 *
 * Connections are keyed by server, cid and start time: cids are per server and start
 * again at 1 when the server restarts. With tens of thousands of connections per epoch
 * the stats row is kept narrow: what a connection is (client, account, address, its
 * subjects) is _opts, written once and again only when it changes.
 *
 * SUBSZ figures describe a server's sublist, so hx.subscription_stats is keyed by
 * server_pk and has no _ident or _opts of its own (the server's are hx.server_*); it is
 * the table to query, with no view above it.
 *
 * main.ips is outside hx: it is not per epoch; retention drops the addresses last seen
 * before its cutoff. The fold upserts it with one INSERT … ON CONFLICT in the epoch's
 * transaction.
 */
import { table, view, type ColumnDef } from "./ddl.ts";

const EPOCH: ColumnDef = ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."];
const OPTS_EPOCH: ColumnDef = [
  "epoch",
  "TIMESTAMPTZ NOT NULL",
  "First epoch with this configuration; it holds until the entity's next row.",
];
const UNLIMITED = "18446744073709551615 = unlimited";

/** hx.accounts (created again by migration 0024, with account_stats' new columns). */
export const ACCOUNTS_VIEW = view(
  "hx.accounts",
  "Per-epoch account figures per server, with the account and server names and the configuration in force (hx.account_stats + _ident + _opts).",
  `
SELECT s.epoch, i.name AS account, sv.name AS server, s.account_pk, s.server_pk,
   o.* EXCLUDE (account_pk, epoch), s.* EXCLUDE (epoch, account_pk, server_pk)
FROM hx.account_stats s
JOIN hx.account_ident i ON i.account_pk = s.account_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = s.server_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = s.account_pk AND s.epoch >= o.epoch`,
  [
    ["account", "", "Account name (the public key in operator mode)."],
    ["server", "", "Name of the server these figures come from."],
  ],
);

export const migration = {
  version: 4,
  name: "accounts, connections, subscription stats, main.ips",
  sql: [
    table(
      "hx.account_ident",
      "Every account ever seen (ACCOUNTZ, account STATZ, JSZ, CONNZ), keyed by name: its public key in operator mode, its configured name otherwise.",
      [
        ["account_pk", "INTEGER PRIMARY KEY", "Stable integer key of the account."],
        ["name", "VARCHAR NOT NULL UNIQUE", "Account name (the public key in operator mode)."],
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the account was first seen."],
      ],
    ),
    table(
      "hx.account_opts",
      "Account configuration: system account flag and JetStream limits (JSZ account_details); a row is written when it differs from the account's previous row, and only in epochs where JSZ was answered.",
      [
        ["account_pk", "INTEGER NOT NULL", "Account (hx.account_ident)."],
        OPTS_EPOCH,
        ["name_tag", "VARCHAR", "Friendly name from the account JWT, when it has one (operator mode)."],
        ["is_system", "BOOLEAN", "Whether this is the system account (ACCOUNTZ / VARZ system_account)."],
        [
          "jetstream",
          "BOOLEAN",
          "Whether JetStream is enabled for the account (it is listed in JSZ account_details).",
        ],
        [
          "js_limits_domain",
          "VARCHAR",
          "JetStream domain the limits were read from (the meta leader's, else the first server by name); empty when none.",
        ],
        [
          "js_max_memory",
          "UBIGINT",
          `JetStream memory limit of the account, bytes (JSZ reserved_memory; ${UNLIMITED}).`,
        ],
        [
          "js_max_storage",
          "UBIGINT",
          `JetStream storage limit of the account, bytes (JSZ reserved_storage; ${UNLIMITED}).`,
        ],
      ],
      ["PRIMARY KEY (account_pk, epoch)"],
    ),
    table(
      "hx.account_stats",
      "Per-epoch figures of each account on each server ($SYS.REQ.ACCOUNT.PING.STATZ with include_unused). The js_* columns are set only on the row of the server that speaks for the account's JetStream in its domain (the meta leader, else the first server by name); JetStream usage is domain-wide, so sum js_* over servers, never the STATZ columns' meaning. Counters count since the server started.",
      [
        EPOCH,
        ["account_pk", "INTEGER NOT NULL", "Account (hx.account_ident)."],
        ["server_pk", "INTEGER NOT NULL", "Server these figures come from (hx.server_ident)."],
        ["conns", "BIGINT", "Client connections of the account on this server."],
        ["leafnodes", "BIGINT", "Leafnode connections of the account on this server."],
        ["total_conns", "BIGINT", "Client plus leafnode connections on this server."],
        ["num_subscriptions", "BIGINT", "Subscriptions of the account on this server (2.10+; NULL before)."],
        ["sent_msgs", "BIGINT", "Messages the server sent to the account's connections (counter)."],
        ["sent_bytes", "BIGINT", "Bytes the server sent to the account's connections (counter)."],
        ["received_msgs", "BIGINT", "Messages the server received from the account's connections (counter)."],
        ["received_bytes", "BIGINT", "Bytes the server received from the account's connections (counter)."],
        ["slow_consumers", "BIGINT", "Slow consumers of the account on this server (counter)."],
        [
          "js_domain",
          "VARCHAR",
          "JetStream domain of the js_* figures; empty when none; NULL on rows without them.",
        ],
        ["js_memory", "BIGINT", "JetStream memory storage the account uses in the domain, bytes."],
        ["js_storage", "BIGINT", "JetStream file storage the account uses in the domain, bytes."],
        [
          "js_streams",
          "INTEGER",
          "Streams of the account in the domain (distinct names in any server's JSZ).",
        ],
        ["js_consumers", "INTEGER", "Consumers of the account in the domain (distinct in any server's JSZ)."],
        ["js_api_total", "BIGINT", "JetStream API requests of the account (counter)."],
        ["js_api_errors", "BIGINT", "JetStream API errors of the account (counter)."],
      ],
    ),
    table(
      "hx.connection_ident",
      "Every client connection ever seen (CONNZ), keyed by server, cid and start time: cids are per server and start again when the server restarts.",
      [
        ["connection_pk", "INTEGER PRIMARY KEY", "Stable integer key of the connection."],
        ["server_pk", "INTEGER NOT NULL", "Server the client is connected to (hx.server_ident)."],
        ["cid", "BIGINT NOT NULL", "Connection id on that server."],
        ["start", "TIMESTAMPTZ NOT NULL", "When the connection was accepted."],
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the connection was first seen."],
      ],
      ["UNIQUE (server_pk, cid, start)"],
    ),
    table(
      "hx.connection_opts",
      "What a connection is (CONNZ with auth and subscriptions); a row is written when it differs from the connection's previous row. Credentials are never stored (no JWT).",
      [
        ["connection_pk", "INTEGER NOT NULL", "Connection (hx.connection_ident)."],
        OPTS_EPOCH,
        ["kind", "VARCHAR", "Connection kind: Client, Leafnode, …"],
        ["type", "VARCHAR", "Client type: nats, mqtt, websocket."],
        ["name", "VARCHAR", "Name the client gave itself."],
        ["lang", "VARCHAR", "Client library language."],
        ["version", "VARCHAR", "Client library version."],
        ["account", "VARCHAR", "Account the connection is bound to (hx.account_ident name)."],
        ["authorized_user", "VARCHAR", "User it authenticated as (a user name or an nkey)."],
        ["name_tag", "VARCHAR", "Friendly name from the user JWT, if any."],
        ["issuer_key", "VARCHAR", "Public key of the user JWT's issuer, if any."],
        ["tags", "VARCHAR[]", "Tags from the user JWT, if any."],
        ["tls_version", "VARCHAR", "TLS version; NULL without TLS."],
        ["tls_cipher_suite", "VARCHAR", "TLS cipher suite; NULL without TLS."],
        ["tls_first", "BOOLEAN", "Whether TLS was negotiated before the INFO (2.10.4+)."],
        ["ip", "VARCHAR", "Client address as text (main.ips)."],
        ["port", "INTEGER", "Client port."],
        [
          "subjects",
          "VARCHAR[]",
          "Subjects the connection subscribes to, sorted and distinct, at most 100 (see subjects_truncated).",
        ],
        ["subjects_truncated", "BOOLEAN", "Whether the connection has more distinct subjects than listed."],
      ],
      ["PRIMARY KEY (connection_pk, epoch)"],
    ),
    table(
      "hx.connection_stats",
      "Per-epoch figures of each open client connection, from its server's CONNZ (all pages). Counters count since the connection started.",
      [
        EPOCH,
        ["connection_pk", "INTEGER NOT NULL", "Connection (hx.connection_ident)."],
        ["pending_bytes", "BIGINT", "Bytes waiting to be written to the client."],
        ["in_msgs", "BIGINT", "Messages received from the client (counter)."],
        ["out_msgs", "BIGINT", "Messages sent to the client (counter)."],
        ["in_bytes", "BIGINT", "Bytes received from the client (counter)."],
        ["out_bytes", "BIGINT", "Bytes sent to the client (counter)."],
        ["subscriptions", "BIGINT", "Subscriptions the connection has."],
        ["rtt_ns", "BIGINT", "Round-trip time last measured, nanoseconds."],
        ["uptime_ns", "BIGINT", "Time connected, nanoseconds."],
        ["idle_ns", "BIGINT", "Time since the last activity, nanoseconds."],
        ["last_activity", "TIMESTAMPTZ", "Time of the last message in or out."],
        [
          "stalls",
          "BIGINT",
          "Times a write to the client stalled, a sign of a slow consumer (2.12+; NULL before).",
        ],
      ],
    ),
    table(
      "hx.subscription_stats",
      "Per-epoch sublist figures of each server (SUBSZ). Keyed by server_pk: the sublist belongs to the server, so there is no _ident or _opts of its own and no view; join hx.server_ident for the name.",
      [
        EPOCH,
        ["server_pk", "INTEGER NOT NULL", "Server (hx.server_ident)."],
        ["num_subscriptions", "BIGINT", "Subscriptions in the sublist, all accounts."],
        ["num_cache", "BIGINT", "Entries in the match cache."],
        ["num_inserts", "BIGINT", "Subscriptions inserted (counter)."],
        ["num_removes", "BIGINT", "Subscriptions removed (counter)."],
        ["num_matches", "BIGINT", "Subject matches performed (counter)."],
        ["cache_hit_rate", "DOUBLE", "Share of matches answered from the cache, 0 to 1."],
        ["max_fanout", "BIGINT", "Largest number of subscriptions a cached subject matched."],
        ["avg_fanout", "DOUBLE", "Average number of subscriptions a cached subject matched."],
      ],
    ),
    table(
      "main.ips",
      "One row per client address ever seen in CONNZ, upserted by the fold in each epoch's transaction.",
      [
        ["ip", "VARCHAR PRIMARY KEY", "Client address as CONNZ reports it."],
        [
          "first_epoch",
          "TIMESTAMPTZ NOT NULL",
          "Epoch in which a connection from this address was first seen.",
        ],
        ["last_epoch", "TIMESTAMPTZ NOT NULL", "Latest epoch with an open connection from this address."],
        [
          "connections",
          "BIGINT NOT NULL",
          "Distinct connections (hx.connection_ident) seen from this address.",
        ],
        [
          "country",
          "VARCHAR",
          "Country (ISO 3166 code); filled when geolocation is configured, NULL otherwise.",
        ],
        ["city", "VARCHAR", "City; filled when geolocation is configured, NULL otherwise."],
        ["asn", "BIGINT", "Autonomous system number; filled when geolocation is configured, NULL otherwise."],
      ],
    ),
    ACCOUNTS_VIEW,
    view(
      "hx.connections",
      "Per-epoch figures of each open client connection with its server name, identity and what it is (hx.connection_stats + _ident + _opts).",
      `
SELECT s.epoch, sv.name AS server, i.cid, i.start, s.connection_pk, i.server_pk,
       o.* EXCLUDE (connection_pk, epoch), s.* EXCLUDE (epoch, connection_pk)
FROM hx.connection_stats s
JOIN hx.connection_ident i ON i.connection_pk = s.connection_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.connection_opts o ON o.connection_pk = s.connection_pk AND s.epoch >= o.epoch`,
      [["server", "", "Name of the server the client is connected to."]],
    ),
  ].join("\n\n"),
};
