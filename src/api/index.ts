/**
 * The request/reply API: one NATS micro service per node whose endpoints node/ adds per
 * system and side, every handler behind the one error adapter, and the discovery ping.
 * Requests flow in from the bus; replies and micro errors flow out, or, for streaming
 * endpoints, Arrow IPC chunks and a trailer paced by the client's acks. It owns no state.
 */
export { startApi } from "./service.ts";
export type { Api } from "./service.ts";
export { adapt, MAX_ERROR_TEXT_BYTES, parseJsonRequest } from "./adapter.ts";
export type { ApiHandler, ApiRequest, ApiReply } from "./adapter.ts";
export { dbQueryHandler } from "./db-handlers.ts";
export { adaptStream, dbQueryStreamHandler, streamOptions } from "./stream-handlers.ts";
export { dbBackupStreamHandler } from "./backup-handlers.ts";
export type { BackupStreamPort, BackupTableRequest } from "./backup-handlers.ts";
export type { QueryStreamPort, StreamContext, StreamHandler, StreamLimits } from "./stream-handlers.ts";
export { serveArrowStream, sendStreamError } from "./stream-sender.ts";
export type { ArrowBatchSource, ArrowStreamOptions, StreamOutcome } from "./stream-sender.ts";
export type { QueryPort, QueryFormat } from "./db-handlers.ts";
export {
  opsInfoHandler,
  opsSizingHandler,
  opsMemoryHandler,
  opsStorageHandler,
  usageRecordHandler,
  parseUsageRecord,
} from "./ops-handlers.ts";
export type { OpsPort } from "./ops-handlers.ts";
export {
  opsVersionHandler,
  opsVersionCheckHandler,
  opsNatsInfoHandler,
  opsMetricsHandler,
  opsPprofHandler,
  MAX_PPROF_MS,
} from "./node-handlers.ts";
export type { NodeOpsPort } from "./node-handlers.ts";
export {
  scraperStatusHandler,
  scraperToggleHandler,
  scraperTriggerHandler,
  sinkInfoHandler,
} from "./scrape-handlers.ts";
export type { ScraperPort } from "./scrape-handlers.ts";
export { disconnectHistoryHandler } from "./scrape-handlers.ts";
export { profilezHandler, expvarzHandler, PROFILE_NAMES } from "./diagnostics-handlers.ts";
export type { AskDiagnostic } from "./diagnostics-handlers.ts";
export {
  dbExplainHandler,
  dbSchemasHandler,
  dbTablesHandler,
  dbColumnsHandler,
  dbMacrosHandler,
} from "./discovery-handlers.ts";
export type { DiscoveryPort } from "./discovery-handlers.ts";
export {
  checksListHandler,
  checksInfoHandler,
  checksFindingsHandler,
  FINDINGS_PAGE_SIZE,
} from "./checks-handlers.ts";
export type { ChecksPort } from "./checks-handlers.ts";
