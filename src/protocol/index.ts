/**
 * The wire: every `$MON.*` subject and JetStream asset name is built here, and the payload
 * types that cross the bus are declared here. Nothing else spells a subject.
 */
export {
  PING_SUBJECT,
  SERVICE_NAME,
  EMBEDDED_SERVER_NAME,
  SERVICE_VERSION,
  systemSubject,
  anySystemSubject,
  systemIdOf,
  STREAMED_SUFFIXES,
  UNKNOWN_SYSTEM_QUEUE,
  nodeSubject,
  nodeSubjects,
  nodeAssets,
  systemSubjects,
  systemAssets,
  endpointName,
  ROLE_CLAIMS_BUCKET,
  roleClaimKey,
  claimProbeSubject,
} from "./subjects.ts";
export type { SystemSubjects } from "./subjects.ts";
export { ScrapeHeader, ACCEPT, CSV_MEDIA_TYPE, JSON_MEDIA_TYPE, API_VERSION_HEADER } from "./headers.ts";
export type {
  EpochAnnouncement,
  OpsInfoReply,
  DiscoverySystem,
  DiscoveryReply,
  RefusedRole,
  QueryRequest,
  ScrapePartRef,
  CommitMarker,
  OwnConnection,
  RawReply,
  ScraperSourceStatus,
  ScraperStatusReply,
  ScraperToggleRequest,
  DiagnosticReply,
  DisconnectBucket,
  DisconnectGroup,
  DisconnectHistoryRequest,
  DisconnectHistoryReply,
  SinkInfoReply,
} from "./payloads.ts";
export { MAX_DISCONNECT_GROUPS } from "./payloads.ts";
export type {
  FindingTransition,
  FindingBaselineEntry,
  FindingBaselineEpoch,
  FindingBaselineTransitions,
} from "./finding-payloads.ts";
export { transitionPayload } from "./finding-payloads.ts";
export type {
  ExplainRequest,
  ExplainReply,
  DiscoverySchema,
  SchemasReply,
  TablesRequest,
  TableEntry,
  TablesReply,
  ColumnsRequest,
  ColumnsReply,
  MacrosRequest,
  MacroEntry,
  MacrosReply,
} from "./discovery-payloads.ts";
export { DISCOVERY_SCHEMAS } from "./discovery-payloads.ts";
export {
  StreamHeader,
  StreamMessageKind,
  ArrowFieldMetadata,
  ServiceErrorHeader,
  STREAM_COMPRESSIONS,
} from "./stream-payloads.ts";
export type {
  StreamCompression,
  StreamOptionsRequest,
  QueryStreamRequest,
  BackupStreamRequest,
  StreamAck,
  StreamEndTrailer,
  StreamErrorTrailer,
  StreamTrailer,
} from "./stream-payloads.ts";
export type {
  CheckParamPayload,
  CheckListEntry,
  CheckListGroup,
  DetailColumnPayload,
  CheckInfoReply,
  CheckInfoRequest,
  FindingsRequest,
  PageInfo,
  FindingsReply,
} from "./check-payloads.ts";
export type {
  OutboxEntry,
  DeliveredAlertEntry,
  DeliveryKind,
  DeliveryAttemptEntry,
  DeliveryLogEntry,
  LabelSet,
  WebhookAlert,
  WebhookMessage,
  PostableAlert,
} from "./notify-payloads.ts";
export { DELIVERY_KINDS } from "./notify-payloads.ts";
export type { OpsSizingReply, OpsMemoryReply, OpsStorageReply, UsageRecord } from "./ops-payloads.ts";
export type {
  VersionReply,
  VersionCheckReply,
  NatsInfoReply,
  PprofRequest,
  PprofReply,
} from "./node-payloads.ts";
export type { RoleClaim } from "./claim-payloads.ts";
