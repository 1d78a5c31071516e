/**
 * ① The scrape side: on each interval it asks every monitored server, through the system
 * account, for its monitoring data, and writes the replies plus a commit marker (one epoch)
 * to a ScrapeSink. It owns the schedule and the set of servers seen so far.
 */
export { startScraper, ScraperState } from "./scraper.ts";
export type {
  Scraper,
  ScraperOptions,
  ScrapeSink,
  ScrapeFaults,
  EpochSummary,
  SourceSummary,
} from "./scraper.ts";
export { ExpectedServers, expectedSeed, metaGroupViews } from "./expected-servers.ts";
export type { ExpectedSeed, ExpectedAfterEpoch, MetaGroupView } from "./expected-servers.ts";
export { gather } from "./gather.ts";
export type { GatherResult, GatheredReply, GatherOptions } from "./gather.ts";
export { SOURCES, JSZ_PAGE_ACCOUNTS } from "./sources.ts";
export { fetchDetails, fetchRemainingPages } from "./pages.ts";
export { SERVICES_SOURCE, gatherServices } from "./services.ts";
export type { ServiceAccount } from "./services.ts";
export type { Source, Paging } from "./sources.ts";
export { requestDiagnostic, DIAGNOSTIC_SINCE } from "./diagnostics.ts";
export type { DiagnosticKind, DiagnosticOutcome, MonitoredServer } from "./diagnostics.ts";
export { startDisconnectTracker } from "./disconnects.ts";
export type { DisconnectTracker } from "./disconnects.ts";
export { checkSystemAccount, systemAccountProblem, SYSTEM_ACCOUNT_PROBE } from "./system-account.ts";
export type { SystemAccountCheck, ConnectionIdentity } from "./system-account.ts";
