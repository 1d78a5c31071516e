/**
 * Views for people: each kind's per-epoch figures joined with its identity and with the
 * configuration in force at that epoch (an ASOF join on the _opts row's first epoch).
 * Columns passed through keep the comments of the columns they come from.
 */
import { view } from "./ddl.ts";

/** hx.servers: created here; 0014 creates it again so it shows columns added since. */
export const SERVERS_VIEW = view(
  "hx.servers",
  "Per-epoch server figures with the server's name and the configuration in force (hx.server_stats + _ident + _opts).",
  `
SELECT s.epoch, i.name AS server, s.server_pk, coalesce(o.cluster_name, i.cluster) AS cluster,
       o.* EXCLUDE (server_pk, epoch, cluster_name), s.* EXCLUDE (epoch, server_pk)
FROM hx.server_stats s
JOIN hx.server_ident i ON i.server_pk = s.server_pk
ASOF LEFT JOIN hx.server_opts o ON o.server_pk = s.server_pk AND s.epoch >= o.epoch`,
  [
    ["server", "", "Server name."],
    ["cluster", "", "Cluster name from the configuration in force (for a leaf, its own name)."],
  ],
);

/** hx.streams: created here; 0014 creates it again so it shows columns added since. */
export const STREAMS_VIEW = view(
  "hx.streams",
  "Per-epoch stream state (from the leader) with its identity, leader name and the configuration in force.",
  `
SELECT s.epoch, i.domain, i.account, i.name AS stream, s.stream_pk, l.name AS leader,
       o.* EXCLUDE (stream_pk, epoch), s.* EXCLUDE (epoch, stream_pk)
FROM hx.stream_stats s
JOIN hx.stream_ident i ON i.stream_pk = s.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch`,
  [
    ["stream", "", "Stream name."],
    ["leader", "", "Name of the server the figures come from (the stream leader)."],
  ],
);

/** hx.consumers: created here; 0014 creates it again so it shows columns added since. */
export const CONSUMERS_VIEW = view(
  "hx.consumers",
  "Per-epoch consumer state (from its leader) with its stream, leader name and the configuration in force.",
  `
SELECT s.epoch, si.domain, si.account, si.name AS stream, i.name AS consumer, s.consumer_pk, i.stream_pk,
       l.name AS leader, o.* EXCLUDE (consumer_pk, epoch), s.* EXCLUDE (epoch, consumer_pk)
FROM hx.consumer_stats s
JOIN hx.consumer_ident i ON i.consumer_pk = s.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = i.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch`,
  [
    ["domain", "", "JetStream domain of the consumer's stream; empty when none."],
    ["account", "", "Account of the consumer's stream."],
    ["stream", "", "Name of the stream the consumer reads."],
    ["consumer", "", "Consumer name."],
    ["leader", "", "Name of the server the figures come from (the consumer leader)."],
  ],
);

export const migration = {
  version: 2,
  name: "servers, streams and consumers views",
  sql: [SERVERS_VIEW, STREAMS_VIEW, CONSUMERS_VIEW].join("\n\n"),
};
