/**
 * ④ Checks: the registry of checks (metadata plus one DuckDB table macro each) and the SQL
 * that installs and runs them. In: configuration (disabled checks, thresholds); out: the
 * statements the catalog side runs after each epoch and the check descriptions the API
 * serves. Pure: no I/O.
 */
export { CATEGORIES, FIXED_COLUMNS, macroName } from "./check.ts";
export type { Category, Check, CheckParam, DetailColumn } from "./check.ts";
export { CHECKS } from "./registry.ts";
export { HELPER_MACROS, checkMacroDefaults, checkMacroSql, findingsSelectSql } from "./macros.ts";
export { contextMacroDefaults, contextMacroStatements } from "./contexts.ts";
export {
  checkCatalogue,
  checkDescription,
  findCheck,
  resolvedParams,
  isDisabled,
  checkListGroups,
  checkInfo,
  detailColumnsPayload,
  installStatements,
  epochCheckStatements,
  findingsRowsSql,
} from "./describe.ts";
export type { CheckSettings } from "./describe.ts";
