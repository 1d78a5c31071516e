/**
 * The checks as the API and the engine see them for one system: thresholds resolved against
 * `check-thresholds`, `disabled-checks` applied, list and info payloads, and the statements
 * the catalog runs. Pure.
 */
import { NotFoundError, currentCheckCode, isOldStyleCode } from "../domain/index.ts";
import type {
  CheckInfoReply,
  CheckListEntry,
  CheckListGroup,
  CheckParamPayload,
  DetailColumnPayload,
} from "../protocol/index.ts";
import { CATEGORIES, macroName, type Check } from "./check.ts";
import { HELPER_MACROS, checkMacroSql, findingsSelectSql } from "./macros.ts";
import { contextMacroStatements } from "./contexts.ts";
import { CHECKS } from "./registry.ts";

/** A system's check configuration. */
export interface CheckSettings {
  readonly disabledChecks: readonly string[];
  readonly checkThresholds: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

const BY_CODE = new Map(CHECKS.map((c) => [c.code, c]));

/** Every check code with its threshold names, for configuration validation. */
export function checkCatalogue(): Map<string, readonly string[]> {
  return new Map(CHECKS.map((c) => [c.code, c.params.map((p) => p.name)]));
}

/** The check with this code; 404 naming the current code for an old-style one, or the unknown code. */
export function findCheck(code: string): Check {
  const check = BY_CODE.get(code);
  if (check) return check;
  if (isOldStyleCode(code) && BY_CODE.has(currentCheckCode(code))) {
    throw new NotFoundError(`"${code}" is an old-style check code; use "${currentCheckCode(code)}"`);
  }
  throw new NotFoundError(`unknown check code "${code}"; checks.list lists the codes`);
}

/** What an alert says about a check (its labels and annotations), or undefined for an unknown code. */
export function checkDescription(
  code: string,
): { name: string; description: string; remediation: string; scope: string; category: string } | undefined {
  const check = BY_CODE.get(code);
  if (!check) return undefined;
  return {
    name: check.name,
    description: check.description,
    remediation: check.remediation,
    scope: check.scope,
    category: check.category,
  };
}

/** The thresholds in force: defaults, overridden by check-thresholds. */
export function resolvedParams(check: Check, settings: CheckSettings): Record<string, number> {
  const overrides = settings.checkThresholds[check.code] ?? {};
  return Object.fromEntries(check.params.map((p) => [p.name, overrides[p.name] ?? p.default]));
}

export function isDisabled(check: Check, settings: CheckSettings): boolean {
  return settings.disabledChecks.includes(check.code);
}

/** checks.list: groups by category label (in catalogue order), checks in code order. */
export function checkListGroups(settings: CheckSettings): CheckListGroup[] {
  return Object.entries(CATEGORIES)
    .map(([key, label]) => ({
      label,
      checks: CHECKS.filter((c) => c.category === key).map((c) => listEntry(c, settings)),
    }))
    .filter((group) => group.checks.length > 0);
}

/** checks.info. */
export function checkInfo(check: Check, settings: CheckSettings): CheckInfoReply {
  return {
    code: check.code,
    name: check.name,
    description: check.description,
    remediation: check.remediation,
    scope: check.scope,
    severity: check.severity === "dynamic" ? "critical" : check.severity,
    optimization: check.optimization,
    category: check.category,
    category_label: CATEGORIES[check.category],
    params: paramsPayload(check, settings),
    detail_columns: detailColumnsPayload(check),
    ...(check.severity === "dynamic" ? { dynamic_severity: true as const } : {}),
    ...(isDisabled(check, settings) ? { disabled: true as const } : {}),
    ...(check.minServerVersion ? { min_server_version: check.minServerVersion } : {}),
    ...(check.lookbackSeconds !== undefined ? { lookback_seconds: check.lookbackSeconds } : {}),
  };
}

export function detailColumnsPayload(check: Check): DetailColumnPayload[] {
  return check.detailColumns.map(({ name, type, description }) => ({ name, type, description }));
}

/** The helper macros, every check's macro and the context macros, to create in a catalog at start-up. */
export function installStatements(): string[] {
  return [...HELPER_MACROS, ...CHECKS.map(checkMacroSql), ...contextMacroStatements()];
}

/** What the catalog runs after each epoch: every operational check, with this system's thresholds. */
export function epochCheckStatements(
  settings: CheckSettings,
): { code: string; sql: string; disabled: boolean }[] {
  return CHECKS.filter((c) => !c.optimization).map((c) => ({
    code: c.code,
    sql: findingsSelectSql(c, resolvedParams(c, settings)),
    disabled: isDisabled(c, settings),
  }));
}

/**
 * checks.findings rows over [$1, $2]: code, severity, entity, entity_pk, check_name and the
 * detail columns; newest epoch first, then critical before warning before info, then by name.
 */
export function findingsRowsSql(check: Check, settings: CheckSettings): string {
  const params = resolvedParams(check, settings);
  const args = [
    "$1::TIMESTAMPTZ",
    "$2::TIMESTAMPTZ",
    ...check.params.map((p) => `${p.name} := ${params[p.name] ?? p.default}`),
  ];
  const details = check.detailColumns.map((c) => `, f."${c.name}"`).join("");
  return `SELECT '${check.code}' AS code, f.severity, f.entity_name AS entity, f.entity_pk,
       ${sqlText(check.name)} AS check_name${details}
FROM ${macroName(check.code)}(${args.join(", ")}) f
ORDER BY f.epoch DESC, CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
         f.entity_name, f.entity_key`;
}

function listEntry(check: Check, settings: CheckSettings): CheckListEntry {
  return {
    code: check.code,
    name: check.name,
    description: check.description,
    scope: check.scope,
    optimization: check.optimization,
    params: paramsPayload(check, settings),
    ...(isDisabled(check, settings) ? { disabled: true as const } : {}),
    ...(check.minServerVersion ? { min_server_version: check.minServerVersion } : {}),
  };
}

function paramsPayload(check: Check, settings: CheckSettings): CheckParamPayload[] {
  const resolved = resolvedParams(check, settings);
  return check.params.map((p) => ({
    name: p.name,
    default: p.default,
    resolved: resolved[p.name] ?? p.default,
    description: p.description,
  }));
}

function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
