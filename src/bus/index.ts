/**
 * The sink bus and natsmon's JetStream assets: connections, the embedded nats-server,
 * stream definitions loaded from streams/, the scrape-stream adapters (publisher on the
 * scrape side, durable commit consumer on the catalog side) and the discovery request
 * that clients broadcast, and the role claims that keep one node per (system, role) on a
 * bus. JsMsg never leaves here.
 */
export {
  connectNats,
  connectionOptions,
  describeCredentials,
  describeTarget,
  probeNats,
  tlsHint,
} from "./connect.ts";
export type { ConnectTarget } from "./connect.ts";
export { startEmbeddedSink, EMBEDDED_ACCOUNT } from "./embedded-sink.ts";
export type { EmbeddedSink } from "./embedded-sink.ts";
export type { ServerRestart } from "./embedded-supervisor.ts";
export { startNatsServer, findNatsServer, INSTALL_HINT } from "./nats-server-process.ts";
export type { NatsServerProcess, NatsServerPorts } from "./nats-server-process.ts";
export { natsServerConfig } from "./nats-server-config.ts";
export type { NatsServerConfigOptions, NatsUser } from "./nats-server-config.ts";
export {
  ensureStream,
  loadStreamDefinition,
  scrapeStreamConfig,
  findingsBucketConfig,
  deliveredBucketConfig,
  claimsBucketConfig,
  notifyAssetConfigs,
} from "./assets.ts";
export { PartReadError, ScrapePublisher, consumeCommits } from "./scrape-stream.ts";
export {
  CommitMarkerReadError,
  commitMarkerAt,
  commitProgress,
  lastCommitMarker,
} from "./last-commit-marker.ts";
export { scrapeStreamInfo } from "./sink-info.ts";
export { latestPerKey, latestPerSubject } from "./kv-read.ts";
export type { StoredMessage } from "./kv-read.ts";
export { discoverNodes } from "./discover.ts";
export type { CommitConsumerEvent, CommitDelivery, ScrapePart } from "./scrape-stream.ts";
export { startRoleClaims, CLAIM_REFRESH_MS } from "./role-claims.ts";
export type { ClaimResult, RoleClaims } from "./role-claims.ts";
