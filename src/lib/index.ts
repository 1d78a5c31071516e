/**
 * Domain-free helpers: logging, exact JSON, Arrow IPC messages and their body codecs.
 * Nothing here knows about NATS, DuckDB or natsmon's domain.
 */
export { createLogger, silentLogger } from "./logger.ts";
export type { Logger } from "./logger.ts";
export { parseJsonExact, stringifyExact } from "./json.ts";
export { registerArrowCodecs } from "./arrow-codecs.ts";
export { IpcMessageEncoder, END_OF_STREAM, ipcRowCount } from "./arrow-ipc.ts";
export type { IpcCompression } from "./arrow-ipc.ts";
export { uniqueNames } from "./unique-names.ts";
export { createMetrics, noMetrics } from "./metrics.ts";
export type { NodeMetrics, LagReader, FiguresReader, RenderedMetrics } from "./metrics.ts";
export { renderFamilies } from "./metric-families.ts";
export type { MetricFamily, MetricSample } from "./metric-families.ts";
export { isoDate, isoTimestamp } from "./iso-time.ts";
export { VERSION } from "./version.ts";
export { settlesWithin } from "./within.ts";
export { redactUrl, urlCredentials } from "./url-credentials.ts";
export type { UrlCredentials } from "./url-credentials.ts";
export { watchPublishRefusals } from "./publish-refusals.ts";
export { httpBaseUrl, parseListenAddress } from "./listen-address.ts";
export type { ListenAddress } from "./listen-address.ts";
export { AUTH_REALM, bearerCheck, fileToken, tokenFileProblem, tokenProblem } from "./bearer-auth.ts";
export type { AuthOutcome, BearerCheck } from "./bearer-auth.ts";
export { tlsServerOptions } from "./tls-listener.ts";
export type { ListenerTls } from "./tls-listener.ts";
