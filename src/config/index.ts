/**
 * Configuration: a YAML file, `NATSMON_*` environment variables and flags flow in; one
 * validated, fully defaulted, frozen Config flows out, or every problem at once, each
 * named by its path. Owns no state.
 */
export { loadConfig, formatConfigIssue, formatConfigIssues } from "./load.ts";
export type { ConfigIssue, ConfigResult, LoadOptions } from "./load.ts";
export { MAX_TIMER_MS, parseDuration } from "./duration.ts";
export { envName } from "./sources.ts";
export { DEFAULT_CHECKPOINT_BYTES } from "./resolve.ts";
export { caProblem, certProblem, keyMatchesCert, keyProblem } from "./tls-files.ts";
export { readListenerTls, renewListenerTls } from "./listener-tls.ts";
export type { ListenerTlsNames, ListenerTlsPaths } from "./listener-tls.ts";
export type {
  Config,
  NodeConfig,
  SinkConfig,
  SystemConfig,
  ScraperConfig,
  ScrapeStreamLimits,
  DbConfig,
  EndpointConfig,
  NotificationsConfig,
  NatsAuth,
  TlsFiles,
  MetricsTls,
  MonitoredAccount,
  MonitoredNats,
  AuthType,
  LogLevel,
} from "./types.ts";
export type { CheckCatalogue } from "./check-settings.ts";
