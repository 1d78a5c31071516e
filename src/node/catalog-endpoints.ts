import {
  dbQueryHandler,
  dbQueryStreamHandler,
  dbBackupStreamHandler,
  dbExplainHandler,
  dbSchemasHandler,
  dbTablesHandler,
  dbColumnsHandler,
  dbMacrosHandler,
  opsInfoHandler,
  opsSizingHandler,
  opsMemoryHandler,
  opsStorageHandler,
  usageRecordHandler,
  checksListHandler,
  checksInfoHandler,
  checksFindingsHandler,
  type ApiHandler,
  type StreamHandler,
} from "../api/index.ts";
import type { SystemConfig } from "../config/index.ts";
import type { Logger } from "../lib/index.ts";
import type { OpsInfoReply } from "../protocol/index.ts";
import type { CatalogSide } from "./catalog-side.ts";

/** `ops.info` and the discovery capabilities: what the configuration enables for a system. */
export function opsInfoOf(system: SystemConfig, catalog?: CatalogSide): OpsInfoReply {
  // A node without the scrape role reports the cadence the scraper's markers carry: its own
  // scraper.interval is only a default nothing runs on.
  const observed = system.roles.includes("scrape") ? undefined : catalog?.scrapeIntervalNs();
  return {
    geo: { enabled: false },
    realtime: { enabled: false },
    scraper: { interval: observed ?? system.scraper.intervalMs * 1_000_000 },
    db: { retention: system.db.retentionMs * 1_000_000 },
    checks: system.disabledChecks.length > 0 ? { disabled: [...system.disabledChecks] } : {},
  };
}

/**
 * ⑦ The API endpoints of a system's catalog side: db.*, checks.*, usage.record and the
 * catalog's ops. Those that need the database answer 503 while it is not open.
 */
export function catalogEndpoints(
  system: SystemConfig,
  catalog: CatalogSide,
  log: Logger,
): Record<string, ApiHandler | StreamHandler> {
  return {
    "db.query": dbQueryHandler(catalog.query),
    "db.query.stream": dbQueryStreamHandler(catalog.queryStream),
    "db.backup.stream": dbBackupStreamHandler(catalog.backupStream),
    "db.explain": dbExplainHandler(catalog.discovery),
    "db.schemas": dbSchemasHandler(catalog.discovery),
    "db.tables": dbTablesHandler(catalog.discovery),
    "db.columns": dbColumnsHandler(catalog.discovery),
    "db.macros": dbMacrosHandler(catalog.discovery),
    "ops.info": opsInfoHandler(() => opsInfoOf(system, catalog)),
    "ops.sizing": opsSizingHandler(catalog.ops),
    "ops.memory": opsMemoryHandler(catalog.ops),
    "ops.storage": opsStorageHandler(catalog.ops),
    "usage.record": usageRecordHandler(catalog.ops, log),
    "checks.list": checksListHandler(catalog.checks),
    "checks.info": checksInfoHandler(catalog.checks),
    "checks.findings": checksFindingsHandler(catalog.checks),
  };
}
