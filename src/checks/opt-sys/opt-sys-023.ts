import type { Check } from "../check.ts";
import { ASSET, ASSET_COLUMN, ASSET_JOINS, RAFT_NODES_CTE } from "./raft-node-sql.ts";

/**
 * A raft node whose write-ahead log (RAFTZ `wal.bytes`) at its latest epoch of the window is
 * large in absolute terms, or as a share of its server's JetStream file storage limit
 * (max_store, VARZ `jetstream.config.max_storage`, in force at that epoch). Critical when
 * either critical threshold is reached, else warning. A server with no positive max_store
 * is judged on the absolute thresholds alone.
 */
export const optSys023: Check = {
  code: "opt-sys-023",
  name: "Raft WAL Size Excessive",
  description:
    "The raft write-ahead log a server keeps for one raft group (RAFTZ `wal`) is very large, in bytes or as a share of the server's JetStream max_store. The log is meant to hold only the entries since the group's last snapshot: a large one means snapshots are not being taken or cannot be (a follower far behind that the leader keeps entries for, a stalled apply, a group that cannot compact), and it costs disk on top of the stream itself, slows restarts (the log is replayed) and can fill the store. Warning from the warning thresholds, critical from the critical ones.",
  remediation:
    "See which group and server it is (`nats server report jetstream`, `/raftz` on the server's monitoring port, 2.10.26+): whether `applied` keeps up with `committed` and whether a peer is offline or far behind. Bring the lagging peer back or remove it (`nats stream cluster peer-remove <stream> <server>`), or step the leader down (`nats stream cluster step-down <stream>`, `nats server raft step-down` for the meta group) so a new leader snapshots and compacts. Make sure the server has disk room and raise `jetstream { max_file_store }` if the store itself is too small.",
  scope: "raft group",
  entityType: "raft_group",
  severity: "dynamic",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.26",
  params: [
    {
      name: "p_warn_bytes_gib",
      default: 10,
      description: "WAL size in GiB from which a warning is reported.",
    },
    { name: "p_crit_bytes_gib", default: 50, description: "WAL size in GiB from which it is critical." },
    {
      name: "p_warn_pct",
      default: 50,
      description: "WAL size as a percentage of the server's max_store from which a warning is reported.",
    },
    {
      name: "p_crit_pct",
      default: 80,
      description: "WAL size as a percentage of the server's max_store from which it is critical.",
    },
  ],
  detailColumns: [
    ASSET_COLUMN,
    { name: "wal_bytes", type: "BIGINT", description: "Bytes of the node's raft write-ahead log." },
    { name: "wal_messages", type: "BIGINT", description: "Entries in the node's raft write-ahead log." },
    {
      name: "max_store_bytes",
      type: "BIGINT",
      description: "JetStream file storage limit of the server (max_store); NULL when unknown or unset.",
    },
    {
      name: "pct_of_max_store",
      type: "DOUBLE",
      description: "wal_bytes as a percentage of max_store_bytes; NULL without a limit.",
    },
  ],
  sql: `
WITH ${RAFT_NODES_CTE}, latest AS (
  SELECT n.raft_group_pk, n.server_pk, max(n.epoch) AS epoch,
         arg_max({bytes: n.raft_wal_bytes, messages: n.raft_wal_messages}, n.epoch) AS wal
  FROM nodes n
  WHERE n.raft_wal_bytes IS NOT NULL
  GROUP BY n.raft_group_pk, n.server_pk
), sized AS (
  SELECT l.*, CASE WHEN o.js_max_storage > 0 THEN o.js_max_storage END AS max_store,
         l.wal.bytes / 1073741824.0 AS gib,
         100.0 * l.wal.bytes / CAST(CASE WHEN o.js_max_storage > 0 THEN o.js_max_storage END AS DOUBLE) AS pct
  FROM latest l
  ASOF LEFT JOIN hx.server_opts o ON o.server_pk = l.server_pk AND l.epoch >= o.epoch
), judged AS (
  SELECT *, CASE WHEN gib >= p_crit_bytes_gib OR coalesce(pct >= p_crit_pct, false) THEN 'critical'
                 WHEN gib >= p_warn_bytes_gib OR coalesce(pct >= p_warn_pct, false) THEN 'warning' END AS severity
  FROM sized
)
SELECT j.epoch, j.raft_group_pk AS entity_pk, g.name AS entity_name, sv.name AS entity_key, sv.name AS server,
       j.severity, ${ASSET} AS asset, CAST(j.wal.bytes AS BIGINT) AS wal_bytes,
       CAST(j.wal.messages AS BIGINT) AS wal_messages, CAST(j.max_store AS BIGINT) AS max_store_bytes,
       CAST(round(j.pct, 2) AS DOUBLE) AS pct_of_max_store
FROM judged j
JOIN hx.raft_group_ident g ON g.raft_group_pk = j.raft_group_pk
JOIN hx.server_ident sv ON sv.server_pk = j.server_pk
${ASSET_JOINS}
WHERE j.severity IS NOT NULL`,
};
