/**
 * The read ports of one system's catalog: db.query, db.query.stream, db.backup.stream,
 * discovery and the checks' endpoints. `opened` throws 503 while the catalog is not open.
 */
import type {
  BackupStreamPort,
  ChecksPort,
  DiscoveryPort,
  QueryPort,
  QueryStreamPort,
} from "../api/index.ts";
import {
  backupStatementFor,
  explainReadOnly,
  listColumns,
  listMacros,
  listSchemas,
  listTables,
  openArrowScan,
  queryFindingsPage,
  runReadOnlyQuery,
  type Catalog,
} from "../catalog/index.ts";
import {
  CHECKS,
  checkInfo,
  checkListGroups,
  checkMacroDefaults,
  contextMacroDefaults,
  findCheck,
  findingsRowsSql,
} from "../checks/index.ts";
import type { SystemConfig } from "../config/index.ts";

export interface CatalogReadPorts {
  readonly query: QueryPort;
  readonly queryStream: QueryStreamPort;
  readonly backupStream: BackupStreamPort;
  readonly discovery: DiscoveryPort;
  readonly checks: ChecksPort;
}

export function catalogReadPorts(system: SystemConfig, opened: () => Catalog): CatalogReadPorts {
  const timeoutMs = system.db.queryTimeoutMs;
  const query: QueryPort = {
    query: (request, format) => {
      return runReadOnlyQuery(opened(), request, {
        maxRows: system.db.queryMaxRows,
        timeoutMs: system.db.queryTimeoutMs,
        format,
      });
    },
  };
  // db.query.stream reads on the query connections, behind the read-only guard; each
  // DuckDB step (and the wait for a connection) is bounded by db.query-timeout.
  const queryStream: QueryStreamPort = {
    limits: system.db.queryStream,
    open: (request, signal) =>
      openArrowScan(opened(), request, { pool: "query", signal, stepTimeoutMs: system.db.queryTimeoutMs }),
  };
  // db.backup.stream: the catalog builds the statement from the table and window (trusted,
  // no read-only guard, no row cap) and reads on the backup connection, apart from queries.
  const backupStream: BackupStreamPort = {
    limits: system.db.queryStream,
    open: async (request, signal) => {
      const open = opened();
      const statement = await backupStatementFor(open, request, signal);
      return openArrowScan(
        open,
        { sql: statement.sql, params: [...statement.params] },
        { pool: "backup", trusted: true, signal, stepTimeoutMs: system.db.queryTimeoutMs },
      );
    },
  };
  const macroDefaults = new Map([...checkMacroDefaults(CHECKS), ...contextMacroDefaults()]);
  const discovery: DiscoveryPort = {
    explain: async (request) => explainReadOnly(opened(), request, { timeoutMs }),
    schemas: async () => listSchemas(opened(), timeoutMs),
    tables: async (schema) => listTables(opened(), timeoutMs, schema),
    columns: async (schema, table) => listColumns(opened(), timeoutMs, schema, table),
    macros: async (schema) => listMacros(opened(), timeoutMs, schema, macroDefaults),
  };

  const checks: ChecksPort = {
    list: () => checkListGroups(system),
    info: (code) => checkInfo(findCheck(code), system),
    findingsPage: async (request) =>
      queryFindingsPage(opened(), {
        rowsSql: findingsRowsSql(findCheck(request.code), system),
        duration: request.duration,
        page: request.page,
        pageSize: request.pageSize,
        format: request.format,
        timeoutMs,
      }),
  };
  return { query, queryStream, backupStream, discovery, checks };
}
