/**
 * Streams (and so their consumers and raft groups) are keyed by their account's id: its
 * public key in operator mode, as the account fold keys hx.account_ident. They were keyed by
 * the `name` of JSZ's account_details, which in operator mode is the account JWT's name, a
 * free label: two accounts whose JWTs carry the same name had their streams of one name
 * merged, a renamed JWT gave the account's streams new pks, and checks joining a stream's
 * account to the account tables never matched. In configuration mode both are the account's
 * name, and nothing changes.
 *
 * An operator-mode catalog made before keeps its streams' history where the key is known
 * for the name: a stream whose account is a JWT name that exactly one account key has ever
 * carried (hx.account_opts name_tag) takes that key. A name two accounts carried (or none
 * recorded) cannot be told apart and stays as it was: those streams' history splits once,
 * the fold giving the streams new pks under their keys. When a JWT was renamed before the
 * upgrade, the account's streams already have one pk per name: the one seen last (the
 * newest first_epoch) takes the key and goes on, the older ones stay under their name.
 *
 * hx.streams, hx.consumers, hx.stream_replicas and hx.consumer_replicas show the account's
 * name for people beside its id (account_name).
 */
import { quote, view, type ColumnDef } from "./ddl.ts";

const ACCOUNT_ID =
  "Account the stream lives in: its id, the public key in operator mode (JSZ account_details id, as hx.account_ident names accounts), its configured name otherwise.";

/** The account's JWT name at the row's epoch (`e`), from `ident`'s account. */
export function accountNameJoin(ident: string, epoch: string): string {
  return `LEFT JOIN hx.account_ident ai ON ai.name = ${ident}.account
ASOF LEFT JOIN hx.account_opts ao ON ao.account_pk = ai.account_pk AND ${epoch} >= ao.epoch`;
}

export const ACCOUNT_NAME = (ident: string) =>
  `coalesce(nullif(ao.name_tag, ''), ${ident}.account) AS account_name`;

export const ACCOUNT_NAME_COLUMN: ColumnDef = [
  "account_name",
  "",
  "The account's name for people: in operator mode the name in its JWT at that epoch (hx.account_opts name_tag; two accounts may carry the same one), else the same as account.",
];

const ACCOUNT_COLUMNS: ColumnDef[] = [["account", "", ACCOUNT_ID], ACCOUNT_NAME_COLUMN];

const STREAMS = view(
  "hx.streams",
  "Per-epoch stream state (from the leader) with its identity, the account's name, the leader name and the configuration in force.",
  `
SELECT s.epoch, i.domain, i.account, ${ACCOUNT_NAME("i")}, i.name AS stream, s.stream_pk, l.name AS leader,
       o.* EXCLUDE (stream_pk, epoch), s.* EXCLUDE (epoch, stream_pk)
FROM hx.stream_stats s
JOIN hx.stream_ident i ON i.stream_pk = s.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.stream_opts o ON o.stream_pk = s.stream_pk AND s.epoch >= o.epoch
${accountNameJoin("i", "s.epoch")}`,
  [
    ...ACCOUNT_COLUMNS,
    ["stream", "", "Stream name."],
    ["leader", "", "Name of the server the figures come from (the stream leader)."],
  ],
);

const CONSUMERS = view(
  "hx.consumers",
  "Per-epoch consumer state (from its leader) with its stream, the account's name, leader name and the configuration in force.",
  `
SELECT s.epoch, si.domain, si.account, ${ACCOUNT_NAME("si")}, si.name AS stream, i.name AS consumer, s.consumer_pk,
       i.stream_pk, l.name AS leader, o.* EXCLUDE (consumer_pk, epoch), s.* EXCLUDE (epoch, consumer_pk)
FROM hx.consumer_stats s
JOIN hx.consumer_ident i ON i.consumer_pk = s.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = i.stream_pk
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
ASOF LEFT JOIN hx.consumer_opts o ON o.consumer_pk = s.consumer_pk AND s.epoch >= o.epoch
${accountNameJoin("si", "s.epoch")}`,
  [
    ["domain", "", "JetStream domain of the consumer's stream; empty when none."],
    ...ACCOUNT_COLUMNS,
    ["stream", "", "Name of the stream the consumer reads."],
    ["consumer", "", "Consumer name."],
    ["leader", "", "Name of the server the figures come from (the consumer leader)."],
  ],
);

const REPLICA_NAMES: ColumnDef[] = [
  ["domain", "", "JetStream domain; empty when none."],
  ...ACCOUNT_COLUMNS,
  ["stream", "", "Stream name."],
  ["server", "", "Name of the server holding the replica."],
];

const STREAM_REPLICAS = view(
  "hx.stream_replicas",
  "Per-epoch stream replicas with stream, account and server names: each server's own copy against the leader's (hx.stream_replica_stats + _ident + hx.stream_stats).",
  `
SELECT s.epoch, si.domain, si.account, ${ACCOUNT_NAME("si")}, si.name AS stream, sv.name AS server,
       s.stream_replica_pk, i.stream_pk, i.server_pk, s.* EXCLUDE (epoch, stream_replica_pk),
       ls.last_seq - s.last_seq AS behind_leader_seq
FROM hx.stream_replica_stats s
JOIN hx.stream_replica_ident i ON i.stream_replica_pk = s.stream_replica_pk
JOIN hx.stream_ident si ON si.stream_pk = i.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
LEFT JOIN hx.stream_stats ls ON ls.stream_pk = i.stream_pk AND ls.epoch = s.epoch
${accountNameJoin("si", "s.epoch")}`,
  [
    ...REPLICA_NAMES,
    [
      "behind_leader_seq",
      "",
      "Leader's last_seq minus this replica's own last_seq: messages the replica lacks; 0 when in sync, NULL when either is unknown.",
    ],
  ],
);

const CONSUMER_REPLICAS = view(
  "hx.consumer_replicas",
  "Per-epoch consumer replicas with stream, account, consumer and server names: each server's own copy against the consumer leader's.",
  `
SELECT s.epoch, si.domain, si.account, ${ACCOUNT_NAME("si")}, si.name AS stream, ci.name AS consumer,
       sv.name AS server, s.consumer_replica_pk, i.consumer_pk, i.server_pk, s.* EXCLUDE (epoch, consumer_replica_pk),
       lc.ack_floor_stream_seq - s.ack_floor_stream_seq AS behind_leader_ack_floor
FROM hx.consumer_replica_stats s
JOIN hx.consumer_replica_ident i ON i.consumer_replica_pk = s.consumer_replica_pk
JOIN hx.consumer_ident ci ON ci.consumer_pk = i.consumer_pk
JOIN hx.stream_ident si ON si.stream_pk = ci.stream_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk
LEFT JOIN hx.consumer_stats lc ON lc.consumer_pk = i.consumer_pk AND lc.epoch = s.epoch
${accountNameJoin("si", "s.epoch")}`,
  [
    ...REPLICA_NAMES,
    ["consumer", "", "Consumer name."],
    [
      "behind_leader_ack_floor",
      "",
      "Leader's ack floor (stream sequence) minus this replica's own; 0 when in sync.",
    ],
  ],
);

/**
 * Streams whose account is a JWT name only one account key ever carried take that key; of
 * several streams that would take the same (domain, key, name), the one seen last.
 */
const CARRY_OVER = `
UPDATE hx.stream_ident AS s SET account = m.account_key
FROM (
  WITH tags AS (
    SELECT o.name_tag, any_value(i.name) AS account_key
    FROM hx.account_opts o JOIN hx.account_ident i ON i.account_pk = o.account_pk
    WHERE nullif(o.name_tag, '') IS NOT NULL AND o.name_tag <> i.name
    GROUP BY o.name_tag
    HAVING count(DISTINCT i.name) = 1
  )
  SELECT c.stream_pk, t.account_key
  FROM hx.stream_ident c
  JOIN tags t ON t.name_tag = c.account
  WHERE c.account NOT IN (SELECT name FROM hx.account_ident)
    AND NOT EXISTS (
      SELECT 1 FROM hx.stream_ident x WHERE x.domain = c.domain AND x.account = t.account_key AND x.name = c.name)
  QUALIFY row_number() OVER (PARTITION BY c.domain, t.account_key, c.name ORDER BY c.first_epoch DESC, c.stream_pk DESC) = 1
) m
WHERE s.stream_pk = m.stream_pk;
UPDATE hx.raft_group_ident AS g SET account = s.account
FROM hx.stream_ident s
WHERE g.stream_pk = s.stream_pk AND g.account IS DISTINCT FROM s.account;`;

export const migration = {
  version: 32,
  name: "streams are keyed by their account's id (the public key in operator mode), with its JWT name beside it",
  sql: [
    CARRY_OVER,
    `COMMENT ON TABLE hx.stream_ident IS ${quote(
      "Every JetStream stream ever seen, keyed by JetStream domain, account id (the public key in operator mode) and name.",
    )};`,
    `COMMENT ON COLUMN hx.stream_ident.account IS ${quote(ACCOUNT_ID)};`,
    `COMMENT ON COLUMN hx.raft_group_ident.account IS ${quote(
      "Account of the stream or consumer: its id, the public key in operator mode (as hx.stream_ident.account); NULL for the meta group.",
    )};`,
    "DROP VIEW hx.streams;",
    STREAMS,
    "DROP VIEW hx.consumers;",
    CONSUMERS,
    "DROP VIEW hx.stream_replicas;",
    STREAM_REPLICAS,
    "DROP VIEW hx.consumer_replicas;",
    CONSUMER_REPLICAS,
  ].join("\n\n"),
};
