/**
 * hx.server_stats.js_reserved_memory and js_reserved_storage were described as reserved by
 * accounts. What nats-server reports there (JSZ `reserved_memory` and `reserved_storage`,
 * the same figures as VARZ `jetstream.stats`) is the sum of the byte limits (`max_bytes`)
 * of the memory or file stream replicas the server holds; account limits do not enter it,
 * and a stream without a byte limit reserves nothing. server-005, server-017 and
 * jetstream-007 read it that way. hx.servers took the old comments when it was created, so
 * its columns are set too.
 */
import { quote } from "./ddl.ts";

const UNREAL =
  "A figure from 2^63 up (such as 18446744073709551615) is no real reservation, and the checks count it as none.";

const JS_RESERVED_COMMENTS: Readonly<Record<string, string>> = {
  js_reserved_memory:
    "JetStream memory reserved on this server by the byte limits of the memory streams it holds, bytes: " +
    "the sum of the max_bytes of their replicas here (JSZ reserved_memory); a stream without a byte limit " +
    `reserves nothing, and account limits do not enter it. nats-server places a memory stream with a byte limit only where it fits in max_memory_store minus the larger of this and js_memory. ${UNREAL}`,
  js_reserved_storage:
    "JetStream file storage reserved on this server by the byte limits of the file streams it holds, bytes: " +
    "the sum of the max_bytes of their replicas here (JSZ reserved_storage); a stream without a byte limit " +
    `reserves nothing, and account limits do not enter it. nats-server places a file stream with a byte limit only where it fits in max_file_store minus the larger of this and js_storage. ${UNREAL}`,
};

export const migration = {
  version: 25,
  name: "hx.server_stats.js_reserved_*: reserved by the streams' byte limits, not by accounts",
  sql: ["hx.server_stats", "hx.servers"]
    .flatMap((relation) =>
      Object.entries(JS_RESERVED_COMMENTS).map(
        ([column, comment]) => `COMMENT ON COLUMN ${relation}.${column} IS ${quote(comment)};`,
      ),
    )
    .join("\n"),
};
