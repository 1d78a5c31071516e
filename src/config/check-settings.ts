import { currentCheckCode, isOldStyleCode } from "../domain/index.ts";

interface Issue {
  path: string;
  message: string;
}

/** What configuration validation needs to know of the checks: each code with its thresholds. */
export type CheckCatalogue = ReadonlyMap<string, readonly string[]>;

/**
 * `disabled-checks` and `check-thresholds` of one system (or of the top level): every code
 * must name a check (an old-style code fails with its current name) and every threshold one
 * of that check's parameters.
 */
export function checkSettingIssues(
  at: string,
  disabled: readonly (string | undefined)[] | undefined,
  thresholds: Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>> | undefined,
  checks: CheckCatalogue,
): Issue[] {
  const prefix = at === "" ? "" : `${at}.`;
  const issues: Issue[] = [];
  (disabled ?? []).forEach((code, i) => {
    if (code === undefined) return;
    const problem = unknownCode(code, checks);
    if (problem) issues.push({ path: `${prefix}disabled-checks[${i}]`, message: problem });
  });
  for (const [code, params] of Object.entries(thresholds ?? {})) {
    const problem = unknownCode(code, checks);
    if (problem) {
      issues.push({ path: `${prefix}check-thresholds.${code}`, message: problem });
      continue;
    }
    const known = checks.get(code) ?? [];
    for (const name of Object.keys(params ?? {})) {
      if (known.includes(name)) continue;
      issues.push({
        path: `${prefix}check-thresholds.${code}.${name}`,
        message:
          known.length === 0
            ? `${code} has no thresholds`
            : `is not a threshold of ${code}; it takes ${known.join(", ")}`,
      });
    }
  }
  return issues;
}

function unknownCode(code: string, checks: CheckCatalogue): string | undefined {
  if (checks.has(code)) return undefined;
  if (isOldStyleCode(code)) return `"${code}" is an old-style check code; use "${currentCheckCode(code)}"`;
  return `"${code}" is not a check code (checks.list on the API lists them)`;
}
