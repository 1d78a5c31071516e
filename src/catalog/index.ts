/**
 * ③ The catalog: one DuckDB file per system. Epochs flow in (a commit marker with its
 * parsed `$SYS` replies) and are folded into the hx tables in one transaction each;
 * read-only SQL results flow out as JSON or CSV, or as Arrow record batches for streams. It
 * owns the file (one instance, one write connection, a small read pool, a backup reader),
 * its schema migrations and the entity key cache.
 */
export { openCatalog } from "./open-catalog.ts";
export { catalogIdentity } from "./catalog-identity.ts";
export type { Catalog } from "./open-catalog.ts";
export { foldEpoch, foldedCommit } from "./fold-epoch.ts";
export { FoldDataError } from "./fold-errors.ts";
export type { EpochInput, FoldPhases, FoldResult, ScrapeReply } from "./fold-epoch.ts";
export { runReadOnlyQuery } from "./query.ts";
export { openArrowScan } from "./arrow-scan.ts";
export type { ArrowScan, ArrowScanOptions } from "./arrow-scan.ts";
export { scanToIpc } from "./scan-to-ipc.ts";
export type { ScanToIpcOptions, ScanToIpcResult } from "./scan-to-ipc.ts";
export type { PoolStats } from "./connection-pool.ts";
export type { QueryOptions, ReadOnlyQuery } from "./query.ts";
export { MIGRATIONS } from "./migrations/index.ts";
export { applyRetention, entityKinds, pkReferences } from "./retention.ts";
export type { KindTables, PkReference, RetentionResult } from "./retention.ts";
export type { Migration } from "./migrations/index.ts";
export { explainReadOnly } from "./explain.ts";
export type { ExplainQuery } from "./explain.ts";
export { listSchemas, listTables, listColumns, listMacros } from "./discovery.ts";
export type { MacroDefaults } from "./discovery.ts";
export { describeBackupSchema, backupStatement, backupStatementFor, backupTableNames } from "./backup.ts";
export type { BackupSchema, BackupRequest, BackupStatement, BackupTable } from "./backup.ts";
export { EPOCH_BOUND_RANGE, EPOCH_TEXT_FORMAT, formatMicros, parseEpochBound } from "./epoch-bound.ts";
export type { EpochBound } from "./epoch-bound.ts";
export { createBackupFile } from "./backup-writer.ts";
export type { BackupFile, TableAppender } from "./backup-writer.ts";
export type { BackupCut, ReconcileResult } from "./backup-reconcile.ts";
export { installCheckMacros, runEpochChecks, latestEpochFindings, firingSince } from "./check-runs.ts";
export type { CheckStatement, StoredFinding, EpochCheckResult } from "./check-runs.ts";
export { ALIGN_FIRING_SQL, writeFiringFindings } from "./findings-firing.ts";
export { queryFindingsPage } from "./check-findings.ts";
export type { FindingsPageRequest, FindingsPage } from "./check-findings.ts";
export { natsFiguresReader } from "./nats-figures.ts";
export type { NatsFiguresScope } from "./nats-figures.ts";
export { catalogSizing, catalogMemory, catalogStorage, recordPageView } from "./ops-figures.ts";
export type { CatalogSizing, MemoryComponent, CatalogStorage, PageView } from "./ops-figures.ts";
