import { checkCatalogue } from "../checks/index.ts";
import { resolveTime } from "./backup-plan.ts";
import { loadConfig, formatConfigIssues, type Config, type EndpointConfig } from "../config/index.ts";
import { printWarnings } from "./config-check.ts";
import type { AttemptResult } from "../notify/index.ts";

/**
 * Loads the configuration exactly as `natsmon run` does (file, environment, the same
 * validation), for the commands that act on a configured notification endpoint. Throws with
 * every problem named by its path.
 */
export async function loadNodeConfig(file: string | undefined): Promise<Config> {
  const path = file ?? process.env.NATSMON_CONFIG;
  const result = await loadConfig({
    ...(path ? { file: path } : {}),
    env: process.env,
    checks: checkCatalogue(),
  });
  if (!result.ok) throw new Error(`invalid configuration:\n${formatConfigIssues(result.errors)}`);
  printWarnings(result.warnings);
  return result.config;
}

/** The configured endpoint of that name, or an error listing the names there are. */
export function findEndpoint(config: Config, name: string): EndpointConfig {
  const endpoint = config.notifications.endpoints.find((e) => e.name === name);
  if (endpoint) return endpoint;
  const names = config.notifications.endpoints.map((e) => e.name);
  throw new Error(
    `no notification endpoint named "${name}"; ` +
      (names.length > 0
        ? `configured: ${names.join(", ")}`
        : "the configuration has none (notifications.webhook / notifications.alertmanager)"),
  );
}

/**
 * Parses `--since`: a duration back from now (`90m`, `24h`, `7d`, `1h30m`) or an RFC 3339
 * time, checked as `natsmon backup` checks its own (a real date, no rolling over). Throws a
 * message for a person naming the flag.
 */
export function parseSince(text: string, now = new Date()): Date {
  const ms = parseDurationText(text);
  if (ms !== undefined) return new Date(now.getTime() - ms);
  return new Date(resolveTime("--since", text, now));
}

function parseDurationText(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as "ms" | "s" | "m" | "h" | "d"
  ];
  return Number(match[1]) * unit;
}

/** What the endpoint answered to an attempt, for a line of output: its status, or why there is none. */
export function answerOf(last: AttemptResult): string {
  if (last.outcome === "unsent") return "not sent";
  return last.status === undefined ? "no answer" : `HTTP ${last.status}`;
}
