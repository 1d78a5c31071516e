import type { Check } from "../check.ts";

/**
 * JetStream storage reserved on the server against its configured limit. JSZ
 * `reserved_storage` is the sum of the `max_bytes` of the file stream replicas the server
 * holds (streams without one reserve nothing; account limits do not enter it). nats-server
 * places a file stream with a byte limit only on servers where it fits in max_store minus
 * the larger of what is reserved and what is stored; storage in use against max_store is
 * server-019's, so this check judges the reservation. It is never compared with the storage
 * in use: a stream without a byte limit stores without reserving. A server without a limit
 * (max_store 0) is left out, and so is a reservation from 2^63 (2^64−1 and other impossible
 * figures).
 */
export const server017: Check = {
  code: "server-017",
  name: "JetStream Storage Pressure",
  description:
    "The byte limits (`max_bytes`) of the file streams placed on the server reserve at least the threshold share of its JetStream storage limit (`max_file_store`, JSZ config `max_storage`), however little they hold. A new file stream, or a larger `max_bytes`, that does not fit in the rest is not placed on this server, and is refused ('insufficient storage resources') when no server has the room, even with the disk empty. Storage in use against the limit is server-019's check.",
  remediation:
    "Compare `reserved_storage` with `config.max_storage` in the server's JSZ (`nats server request jetstream`) and list the file streams it holds with their limits (`nats stream report`, `nats stream info <stream>`: Max Bytes against Bytes). Lower the `max_bytes` of streams that hold far less than they reserve (`nats stream edit <stream> --max-bytes <size>`), remove streams nobody uses, move replicas to servers with room (`nats stream cluster peer-remove <stream> <server>`), or raise `max_file_store` in the server's `jetstream` block once the disk has the space.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "saturation",
  optimization: false,
  params: [
    {
      name: "p_warn_percent",
      default: 90,
      description:
        "Fires when the storage reserved reaches this percentage of the server's JetStream storage limit.",
    },
  ],
  detailColumns: [
    {
      name: "reserved_storage_bytes",
      type: "BIGINT",
      description:
        "JetStream storage reserved on the server by its file streams' max_bytes, bytes (JSZ reserved_storage).",
    },
    {
      name: "max_storage_bytes",
      type: "BIGINT",
      description: "The server's JetStream storage limit, bytes (max_file_store).",
    },
    {
      name: "reserved_percent",
      type: "DOUBLE",
      description: "reserved_storage_bytes as a percentage of max_storage_bytes.",
    },
    {
      name: "storage_bytes",
      type: "BIGINT",
      description: "JetStream file storage in use, bytes (JSZ storage), for comparison.",
    },
    { name: "warn_percent", type: "DOUBLE", description: "Threshold in force, percent." },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key, s.server,
       'warning' AS severity,
       CAST(s.js_reserved_storage AS BIGINT) AS reserved_storage_bytes,
       CAST(s.js_max_storage AS BIGINT) AS max_storage_bytes,
       CAST(round(100.0 * s.js_reserved_storage / CAST(s.js_max_storage AS DOUBLE), 2) AS DOUBLE) AS reserved_percent,
       CAST(s.js_storage AS BIGINT) AS storage_bytes,
       CAST(p_warn_percent AS DOUBLE) AS warn_percent
FROM hx.servers s
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.js_max_storage > 0
  AND s.js_reserved_storage < CAST(9223372036854775808 AS UBIGINT)
  AND CAST(s.js_reserved_storage AS DOUBLE) * 100 >= CAST(p_warn_percent AS DOUBLE) * CAST(s.js_max_storage AS DOUBLE)`,
};
