/**
 * Domain-free helpers: logging and exact JSON. Nothing here knows about NATS,
 * DuckDB or natsmon's domain.
 */
export { createLogger, silentLogger } from "./logger.ts";
export type { Logger } from "./logger.ts";
export { parseJsonExact, stringifyExact } from "./json.ts";
export { registerArrowCodecs } from "./arrow-codecs.ts";
export { IpcMessageEncoder, END_OF_STREAM } from "./arrow-ipc.ts";
export type { IpcCompression } from "./arrow-ipc.ts";
