/**
 * `natsmon findings list [--system ID] [--severity LEVEL] [--code CODE]`: what is firing now,
 * as the finding feed holds it (hx.findings_in_force, read over db.query), worst first, each
 * with its check's name (checks.list). The answer to "what is wrong right now" without
 * writing SQL or waiting for a transition.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { NatsConnection } from "@nats-io/nats-core";
import { SEVERITIES, type Severity } from "../domain/index.ts";
import { systemSubjects, type CheckListGroup } from "../protocol/index.ts";
import { fail, onSystem, withClientOptions, type ClientOptions } from "./client.ts";
import { printOut, requestEndpoint } from "./endpoint-request.ts";
import { systemOption } from "./system-option.ts";
import { renderTable } from "./table.ts";
import { timeoutOption } from "./timeout-option.ts";

interface ListOptions extends ClientOptions {
  system?: string;
  format: string;
  severity: Severity;
  code?: string;
  limit: number;
  timeout: number;
}

/** One firing finding, as `--format json` prints it. */
export interface FiringFinding {
  severity: Severity;
  code: string;
  /** The check's name (checks.list); the code alone when the node's catalogue lacks it. */
  name: string;
  entity_type: string;
  entity_name: string;
  entity_key: string | null;
  entity_pk: number;
  server: string | null;
  starts_at: string;
  /** The latest epoch had no row for it (its server did not answer in full, or its check failed): kept, not resolved. */
  held: boolean;
  /** The check's detail columns of the latest epoch's row; null when held. */
  detail: Record<string, unknown> | null;
}

/** `--format json`: what is firing, and how much of it was left out by `--limit`. */
export interface FiringList {
  /**
   * The epoch the list reflects: the latest the finding feed diffed, or with nothing firing,
   * the latest the checks ran over; null before the first.
   */
  epoch: string | null;
  /** Findings matching the filters, listed or not, in all and by severity. */
  total: number;
  by_severity: Record<Severity, number>;
  findings: FiringFinding[];
}

const RANK = "CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END";

/**
 * Firing findings at `$1` (0 critical … 2 info) or worse, of check `$2` (NULL: every check),
 * the first `$3` of them, worst and oldest first. One row even when nothing matches (its
 * finding columns NULL), carrying the epoch the list reflects (FiringList.epoch).
 */
const FIRING_SQL = `
WITH matching AS (
  SELECT f.severity, f.code, f.entity_type, f.entity_name, f.entity_key, f.entity_pk, f.server,
         f.starts_at, f.held, f.detail, ${RANK} AS rank, count(*) OVER () AS total,
         count(*) FILTER (WHERE f.severity = 'critical') OVER () AS n_critical,
         count(*) FILTER (WHERE f.severity = 'warning') OVER () AS n_warning,
         count(*) FILTER (WHERE f.severity = 'info') OVER () AS n_info
  FROM hx.findings_in_force f
  WHERE ${RANK} <= $1 AND ($2::VARCHAR IS NULL OR f.code = $2)
  ORDER BY rank, f.starts_at, f.code, f.entity_name, f.entity_key
  LIMIT $3
)
SELECT coalesce((SELECT max(baseline_epoch) FROM hx.findings_firing), (SELECT max(epoch) FROM hx.check_runs))
         AS list_epoch, m.*
FROM (SELECT 1) one LEFT JOIN matching m ON true
ORDER BY m.rank, m.starts_at, m.code, m.entity_name, m.entity_key`;

export function listFindingsCommand(findings: Command): void {
  withClientOptions(
    findings
      .command("list")
      .description("list the findings firing now, worst first (as the finding feed holds them)")
      .addOption(systemOption("system to ask"))
      .option(
        "--severity <level>",
        "only findings of this severity or worse: info, warning or critical",
        parseSeverity,
        "info",
      )
      .option("--code <code>", "only this check's findings, e.g. jetstream-003")
      .option("--limit <n>", "list at most n findings (the total is still counted)", parseCount, 1000)
      .option("-f, --format <format>", "table or json", "table")
      .addOption(timeoutOption("how long to wait for the answer")),
  ).action((options: ListOptions) => list(options));
}

function parseSeverity(value: string): Severity {
  const severity = SEVERITIES.find((s) => s === value);
  if (!severity) throw new InvalidArgumentError(`expected ${SEVERITIES.join(", ")}.`);
  return severity;
}

/** A count flag's value (`--limit`, `findings watch --count`): a whole number from 1. */
export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number from 1.");
  return n;
}

async function list(options: ListOptions): Promise<void> {
  if (!["table", "json"].includes(options.format)) {
    fail(`--format must be table or json, not ${options.format}`, 2);
    return;
  }
  await onSystem(options, async (nc, system) => {
    const firing = await readFiring(nc, system, options);
    if (!firing) return;
    if (options.format === "json") await printOut(JSON.stringify(firing, null, 2) + "\n");
    else await printOut(firingText(firing, options));
  });
}

/** The firing set over db.query, named through checks.list; undefined once a failure is printed. */
async function readFiring(
  nc: NatsConnection,
  system: string,
  options: ListOptions,
): Promise<FiringList | undefined> {
  const subjects = systemSubjects(system);
  const rank = { critical: 0, warning: 1, info: 2 }[options.severity];
  const catalogue = await requestEndpoint(
    nc,
    system,
    { endpoint: "checks.list", subject: subjects.checksList, body: {} },
    options.timeout,
  );
  if (!catalogue) return undefined;
  const names = new Map(
    catalogue.json<CheckListGroup[]>().flatMap((g) => g.checks.map((c) => [c.code, c.name] as const)),
  );
  // A mistyped code would list nothing, as if nothing fired.
  if (options.code !== undefined && !names.has(options.code)) {
    fail(`system "${system}" has no check ${options.code}; \`natsmon checks list\` lists them`);
    return undefined;
  }
  const reply = await requestEndpoint(
    nc,
    system,
    {
      endpoint: "db.query",
      subject: subjects.dbQuery,
      body: { sql: FIRING_SQL, params: [rank, options.code ?? null, options.limit] },
    },
    options.timeout,
  );
  if (!reply) return undefined;
  const rows = reply.json<(Omit<FiringFinding, "name" | "detail"> & QueryExtras)[]>();
  const found = rows.filter((r) => r.code !== null);
  const first = found[0];
  return {
    epoch: rows[0]?.list_epoch ?? null,
    total: Number(first?.total ?? 0),
    by_severity: {
      critical: Number(first?.n_critical ?? 0),
      warning: Number(first?.n_warning ?? 0),
      info: Number(first?.n_info ?? 0),
    },
    findings: found.map((r) => ({
      severity: r.severity,
      code: r.code,
      name: names.get(r.code) ?? r.code,
      entity_type: r.entity_type,
      entity_name: r.entity_name,
      entity_key: r.entity_key,
      entity_pk: Number(r.entity_pk),
      server: r.server,
      starts_at: r.starts_at,
      held: r.held,
      detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
    })),
  };
}

/** The query's columns beyond a finding's own. */
interface QueryExtras {
  list_epoch: string | null;
  total: number | string;
  n_critical: number | string;
  n_warning: number | string;
  n_info: number | string;
  rank: number;
  detail: string | null;
}

function firingText(firing: FiringList, options: ListOptions): string {
  const scope = [
    options.severity === "info" ? "" : `${options.severity} or worse`,
    options.code ? `of ${options.code}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  const what = scope ? `findings (${scope})` : "findings";
  if (firing.epoch === null) {
    return "no epoch has been checked yet: findings appear once the node has folded and checked its first epoch\n";
  }
  const after = `after epoch ${firing.epoch}`;
  if (firing.total === 0) return `no ${what} firing ${after}\n`;
  const table = renderTable(
    firing.findings.map((f) => ({
      severity: f.severity,
      code: f.code,
      check: f.name,
      entity: `${f.entity_type} ${f.entity_name}${f.entity_key ? ` [${f.entity_key}]` : ""}`,
      server: f.server,
      since: f.starts_at,
      notes: f.held ? "held: not seen in the latest epoch" : "",
    })),
  );
  const counts = SEVERITIES.toReversed()
    .map((s) => [s, firing.by_severity[s]] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(", ");
  const shown =
    firing.findings.length < firing.total
      ? `; ${firing.findings.length} listed, --limit ${firing.total} for all`
      : "";
  return `${table}${firing.total} ${what} firing ${after} (${counts}${shown})\n`;
}
