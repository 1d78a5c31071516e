/**
 * The links between servers: routes (ROUTEZ), gateway connections (GATEWAYZ) and leafnode
 * connections (LEAFZ), in the _ident / _opts / _stats shape, with a view per kind and
 * hx.gateway_expected, the configured gateways a server has no connection to.
 *
 * Identity. 2.9.10 names no peer directly (nats-monitoring.md §0.14): ROUTEZ gives the
 * remote server's id and GATEWAYZ the remote id as the connection name; the fold maps ids
 * to names through the ServerInfo of every reply of the epoch and keeps the id when no
 * reply names it (so a peer that did not answer gets a new identity when its id changes on
 * restart). LEAFZ gives no id at all before 2.11.7 and no name before 2.9.15: a leafnode
 * connection is named by the remote's server name when the reply has one, else by its IP
 * (not its port, which on the accepting side is ephemeral and changes on every reconnect).
 *
 * Peers that are down vanish from these replies (§0.8), so the _stats tables only hold
 * links that exist; hx.gateway_expected and the servers' configured cluster_urls,
 * gateways and leaf_remote_urls in hx.server_opts are what a missing link is judged against.
 * Durations (rtt, uptime, idle) arrive as Go duration strings and are stored as *_ns.
 */
import { table, view, type ColumnDef } from "./ddl.ts";

const EPOCH: ColumnDef = ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."];
const OPTS_EPOCH: ColumnDef = [
  "epoch",
  "TIMESTAMPTZ NOT NULL",
  "First epoch with this configuration; it holds until the entity's next row.",
];
const FIRST_EPOCH: ColumnDef = [
  "first_epoch",
  "TIMESTAMPTZ NOT NULL",
  "Epoch in which the link was first seen.",
];
const SERVER: ColumnDef = ["server_pk", "INTEGER NOT NULL", "Server reporting the link (hx.server_ident)."];

/** The figures every kind of link reports about its connection. */
const CONNECTION: ColumnDef[] = [
  ["ip", "VARCHAR", "IP address of the other end."],
  ["port", "INTEGER", "Port of the other end (ephemeral on the accepting side)."],
  ["start", "TIMESTAMPTZ", "When the connection was made; a new value means it was made again."],
  ["last_activity", "TIMESTAMPTZ", "Last time anything was received or sent."],
  ["rtt_ns", "BIGINT", "Round-trip time last measured, nanoseconds."],
  ["uptime_ns", "BIGINT", "Age of the connection, nanoseconds."],
  ["idle_ns", "BIGINT", "Time since the last activity, nanoseconds."],
];
const TRAFFIC: ColumnDef[] = [
  ["in_msgs", "BIGINT", "Messages received over the connection (counter, restarts with it)."],
  ["out_msgs", "BIGINT", "Messages sent over the connection (counter, restarts with it)."],
  ["in_bytes", "BIGINT", "Bytes received over the connection (counter, restarts with it)."],
  ["out_bytes", "BIGINT", "Bytes sent over the connection (counter, restarts with it)."],
  ["subscriptions", "BIGINT", "Subscriptions (interest) propagated over the connection."],
];

export const migration = {
  version: 3,
  name: "routes, gateways and leafnodes",
  sql: [
    table(
      "hx.route_ident",
      "Every route ever seen: one server's connection to another server of its cluster. Several routes to one remote exist from 2.10 (pooled, or pinned to an account).",
      [
        ["route_pk", "INTEGER PRIMARY KEY", "Stable integer key of the route."],
        SERVER,
        [
          "remote",
          "VARCHAR NOT NULL",
          "Name of the server at the other end; its server id when no reply of the epoch named it (2.9.10 ROUTEZ has only remote_id).",
        ],
        ["account", "VARCHAR NOT NULL", "Account the route is pinned to (2.10+); empty for a shared route."],
        [
          "pool_index",
          "INTEGER NOT NULL",
          "Which of several routes to the same remote and account: pool_idx when the reply has it, else the rank by rid (0 when there is one route).",
        ],
        FIRST_EPOCH,
      ],
      ["UNIQUE (server_pk, remote, account, pool_index)"],
    ),
    table(
      "hx.route_opts",
      "Route configuration from ROUTEZ; a row is written when it differs from the route's previous row.",
      [
        ["route_pk", "INTEGER NOT NULL", "Route (hx.route_ident)."],
        OPTS_EPOCH,
        ["did_solicit", "BOOLEAN", "Whether this server made the connection (else the remote did)."],
        [
          "is_configured",
          "BOOLEAN",
          "Whether the remote is in this server's configured routes (else discovered).",
        ],
        ["compression", "VARCHAR", "Compression mode in use (2.10+)."],
      ],
      ["PRIMARY KEY (route_pk, epoch)"],
    ),
    table(
      "hx.route_stats",
      "Per-epoch figures of each route that exists, from ROUTEZ of the server at this end.",
      [
        EPOCH,
        ["route_pk", "INTEGER NOT NULL", "Route (hx.route_ident)."],
        ["remote_id", "VARCHAR", "Server id of the remote this epoch (changes when it restarts)."],
        ["rid", "BIGINT", "Route connection id on this server; a new value means it reconnected."],
        ...CONNECTION,
        ["pending_size", "BIGINT", "Bytes waiting to be written to the route."],
        ...TRAFFIC,
      ],
    ),
    table(
      "hx.gateway_ident",
      "Every gateway connection ever seen: one per server and remote gateway outbound, one per server, remote gateway and remote server inbound.",
      [
        ["gateway_pk", "INTEGER PRIMARY KEY", "Stable integer key of the gateway connection."],
        SERVER,
        ["gateway", "VARCHAR NOT NULL", "Name of the remote gateway (its cluster name)."],
        [
          "direction",
          "VARCHAR NOT NULL",
          "outbound (this server connects) or inbound (a remote server connects).",
        ],
        [
          "remote_server",
          "VARCHAR NOT NULL",
          "Inbound: name of the remote server (its id when no reply of the epoch named it). Outbound: empty, as the outbound connection may move to any server of the remote gateway.",
        ],
        FIRST_EPOCH,
      ],
      ["UNIQUE (server_pk, gateway, direction, remote_server)"],
    ),
    table(
      "hx.gateway_opts",
      "Gateway connection configuration from GATEWAYZ; a row is written when it differs from the previous row.",
      [
        ["gateway_pk", "INTEGER NOT NULL", "Gateway connection (hx.gateway_ident)."],
        OPTS_EPOCH,
        [
          "configured",
          "BOOLEAN",
          "Whether the remote gateway is in this server's configuration (else discovered).",
        ],
      ],
      ["PRIMARY KEY (gateway_pk, epoch)"],
    ),
    table(
      "hx.gateway_stats",
      "Per-epoch figures of each gateway connection, from GATEWAYZ of the server at this end. An outbound row with connected false is a configured gateway (VARZ gateway.gateways) that the server has no connection to this epoch.",
      [
        EPOCH,
        ["gateway_pk", "INTEGER NOT NULL", "Gateway connection (hx.gateway_ident)."],
        [
          "connected",
          "BOOLEAN NOT NULL",
          "Whether the connection exists this epoch; the other columns are NULL when not.",
        ],
        [
          "remote_server",
          "VARCHAR",
          "Name of the remote server connected this epoch (its id when no reply named it).",
        ],
        ["remote_id", "VARCHAR", "Server id of the remote server connected this epoch."],
        ["cid", "BIGINT", "Connection id on this server; a new value means it reconnected."],
        ...CONNECTION,
        ["pending_bytes", "BIGINT", "Bytes waiting to be written to the connection."],
        ...TRAFFIC,
        ["accounts", "INTEGER", "Accounts listed for the connection (outbound, when asked with accounts)."],
        [
          "accounts_not_interest_only",
          "INTEGER",
          "Listed accounts not in Interest-Only mode (Optimistic or Transitioning).",
        ],
      ],
    ),
    table(
      "hx.leafnode_ident",
      "Every leafnode connection ever seen, from either end (the hub and the leaf both list it; 2.9.10 does not say which end is which).",
      [
        ["leafnode_pk", "INTEGER PRIMARY KEY", "Stable integer key of the leafnode connection."],
        SERVER,
        ["account", "VARCHAR NOT NULL", "Local account the connection is bound to."],
        [
          "remote",
          "VARCHAR NOT NULL",
          "Server name of the other end when the reply has one (2.9.15+), else its IP address; a second connection with the same IP and account gets #2, #3… in port order.",
        ],
        FIRST_EPOCH,
      ],
      ["UNIQUE (server_pk, account, remote)"],
    ),
    table(
      "hx.leafnode_opts",
      "Leafnode connection configuration from LEAFZ; a row is written when it differs from the previous row.",
      [
        ["leafnode_pk", "INTEGER NOT NULL", "Leafnode connection (hx.leafnode_ident)."],
        OPTS_EPOCH,
        ["is_spoke", "BOOLEAN", "Whether the other end is a spoke, i.e. this server is the hub (2.9.15+)."],
        ["is_isolated", "BOOLEAN", "Whether the connection is isolated (2.12+)."],
        ["compression", "VARCHAR", "Compression mode in use (2.10+)."],
      ],
      ["PRIMARY KEY (leafnode_pk, epoch)"],
    ),
    table(
      "hx.leafnode_stats",
      "Per-epoch figures of each leafnode connection that exists, from LEAFZ of the server at this end.",
      [
        EPOCH,
        ["leafnode_pk", "INTEGER NOT NULL", "Leafnode connection (hx.leafnode_ident)."],
        ["name", "VARCHAR", "Server name of the other end (2.9.15+)."],
        ["remote_id", "VARCHAR", "Server id of the other end (2.11.7+)."],
        ["ip", "VARCHAR", "IP address of the other end."],
        ["port", "INTEGER", "Port of the other end (ephemeral on the hub's side)."],
        ["rtt_ns", "BIGINT", "Round-trip time last measured, nanoseconds."],
        ...TRAFFIC,
      ],
    ),
    view(
      "hx.routes",
      "Per-epoch route figures with the server names at both ends and the configuration in force.",
      `
SELECT s.epoch, sv.name AS server, sv.cluster, i.remote, i.account, i.pool_index, s.route_pk, i.server_pk,
       o.* EXCLUDE (route_pk, epoch), s.* EXCLUDE (epoch, route_pk)
FROM hx.route_stats s
JOIN hx.route_ident i ON i.route_pk = s.route_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.route_opts o ON o.route_pk = s.route_pk AND s.epoch >= o.epoch`,
      [
        ["server", "", "Name of the server reporting the route."],
        ["cluster", "", "Cluster of the server reporting the route, when first seen."],
      ],
    ),
    view(
      "hx.gateways",
      "Per-epoch gateway connection figures with the server name and the configuration in force; connected false marks a configured gateway without a connection.",
      `
SELECT s.epoch, sv.name AS server, sv.cluster, i.gateway, i.direction,
       coalesce(s.remote_server, nullif(i.remote_server, '')) AS remote_server, s.gateway_pk, i.server_pk,
       o.* EXCLUDE (gateway_pk, epoch), s.* EXCLUDE (epoch, gateway_pk, remote_server)
FROM hx.gateway_stats s
JOIN hx.gateway_ident i ON i.gateway_pk = s.gateway_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.gateway_opts o ON o.gateway_pk = s.gateway_pk AND s.epoch >= o.epoch`,
      [
        ["server", "", "Name of the server reporting the connection."],
        ["cluster", "", "Cluster of the server reporting the connection, when first seen."],
        [
          "remote_server",
          "",
          "Name of the remote server (its id when no reply named it); NULL when not connected.",
        ],
      ],
    ),
    view(
      "hx.gateway_expected",
      "Configured gateways a server has no outbound connection to, per epoch: the server answered GATEWAYZ, its VARZ lists the gateway, and GATEWAYZ has no connection to it (a remote cluster that is down simply vanishes from GATEWAYZ, nats-monitoring.md §0.8).",
      `
SELECT s.epoch, sv.name AS server, sv.cluster, i.gateway, i.server_pk, s.gateway_pk
FROM hx.gateway_stats s
JOIN hx.gateway_ident i ON i.gateway_pk = s.gateway_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.gateway_opts o ON o.gateway_pk = s.gateway_pk AND s.epoch >= o.epoch
WHERE i.direction = 'outbound' AND NOT s.connected AND o.configured`,
      [
        ["epoch", "", "Epoch in which the connection was missing."],
        ["server", "", "Name of the server that should be connected."],
        ["cluster", "", "Cluster of that server, when first seen."],
        ["gateway", "", "Configured remote gateway it has no connection to."],
        ["server_pk", "", "That server (hx.server_ident)."],
        ["gateway_pk", "", "The outbound gateway link (hx.gateway_ident)."],
      ],
    ),
    view(
      "hx.leafnodes",
      "Per-epoch leafnode connection figures with the server name and the configuration in force.",
      `
SELECT s.epoch, sv.name AS server, sv.cluster, i.account, i.remote, s.leafnode_pk, i.server_pk,
       o.* EXCLUDE (leafnode_pk, epoch), s.* EXCLUDE (epoch, leafnode_pk)
FROM hx.leafnode_stats s
JOIN hx.leafnode_ident i ON i.leafnode_pk = s.leafnode_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
ASOF LEFT JOIN hx.leafnode_opts o ON o.leafnode_pk = s.leafnode_pk AND s.epoch >= o.epoch`,
      [
        ["server", "", "Name of the server reporting the connection."],
        [
          "cluster",
          "",
          "Cluster of the server reporting the connection (for a leaf, its own name), when first seen.",
        ],
      ],
    ),
  ].join("\n\n"),
};
