import { readFile } from "node:fs/promises";
import { availableParallelism, hostname as osHostname } from "node:os";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { fileSchema } from "./schema.ts";
import { applyOverrides } from "./sources.ts";
import { buildConfig, configIssues } from "./resolve.ts";
import { salvage } from "./salvage.ts";
import { withEndpointName } from "./endpoints.ts";
import { fileIssues } from "./file-settings.ts";
import { closestKey, knownKeys } from "./known-keys.ts";
import type { Config } from "./types.ts";
import type { CheckCatalogue } from "./check-settings.ts";

export interface ConfigIssue {
  /** Where in the file, e.g. `notifications.webhook[4].auth-token`. */
  path: string;
  message: string;
  /** The name of the notification endpoint the path lies in, when it has one. */
  endpoint?: string;
}

/**
 * A frozen Config, or every error; either way the warnings: settings accepted that do
 * nothing or are likely slips, which `config check` prints and a starting node logs.
 */
export type ConfigResult =
  | { ok: true; config: Config; warnings: ConfigIssue[] }
  | { ok: false; errors: ConfigIssue[]; warnings: ConfigIssue[] };

export interface LoadOptions {
  file?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Dotted kebab paths, e.g. `{"sink.url": "nats://…"}`. */
  flags?: Readonly<Record<string, unknown>>;
  hostname?: string;
  /** The cores db.threads is warned against; os.availableParallelism() unless given. */
  cores?: number;
  /** The checks (code → threshold names) that disabled-checks, check-thresholds and endpoint patterns may name. */
  checks?: CheckCatalogue;
}

/**
 * YAML file, then `NATSMON_*` env, then flags, validated once into a frozen, defaulted
 * Config. Every problem is reported together, each named by its path, the files the
 * configuration names (credentials, the nats-server binary) checked as well.
 */
export async function loadConfig(options: LoadOptions = {}): Promise<ConfigResult> {
  let raw: Record<string, unknown> = {};
  if (options.file !== undefined) {
    let text: string;
    try {
      text = await readFile(options.file, "utf8");
    } catch (err) {
      return {
        ok: false,
        errors: [{ path: "(file)", message: `cannot read ${options.file}: ${unreadable(err)}` }],
        warnings: [],
      };
    }
    const doc = parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) {
      return {
        ok: false,
        // The first line; the excerpt the colon introduces is on the next ones.
        errors: doc.errors.map((e) => ({
          path: "(file)",
          message: e.message.split("\n")[0]!.replace(/:$/, ""),
        })),
        warnings: [],
      };
    }
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) {
      if (typeof value !== "object" || Array.isArray(value)) {
        return {
          ok: false,
          errors: [{ path: "(file)", message: "the configuration must be a YAML mapping" }],
          warnings: [],
        };
      }
      raw = value as Record<string, unknown>;
    }
  }
  const overrideIssues = applyOverrides(raw, options.env ?? {}, options.flags ?? {});
  const parsed = fileSchema.safeParse(raw, { error: missingKey });
  const schemaIssues = parsed.success ? [] : zodIssues(parsed.error);
  // The later checks run on what passed the schema, so a bad scraper.interval does not hide
  // a bad endpoint; a path the schema already refused is not reported twice.
  const view = parsed.success ? parsed.data : (salvage(fileSchema, raw) ?? {});
  const given = new Set(Object.keys(raw).filter((k) => raw[k] !== undefined));
  const later = configIssues(view, given, options.checks, options.cores ?? availableParallelism());
  const files = await fileIssues(view, options.env ?? {});
  const refused = schemaIssues.flatMap((i) => i.path.split(", "));
  const errors = [
    ...overrideIssues,
    ...schemaIssues,
    ...[...later.issues, ...files].filter((i) => !refused.some((r) => within(i.path, r))),
  ];
  const named = (issues: ConfigIssue[]) => issues.map((i) => withEndpointName(i, raw));
  const warnings = named(later.warnings);
  if (!parsed.success || errors.length > 0) return { ok: false, errors: named(errors), warnings };
  const config = buildConfig(parsed.data, options.hostname ?? safeHostname());
  return { ok: true, config: deepFreeze(config), warnings };
}

/** Whether `path` is `outer` or lies inside it (`a.b[0]` is inside `a.b` and `a`). */
function within(path: string, outer: string): boolean {
  if (outer === "(root)") return true;
  return path === outer || path.startsWith(`${outer}.`) || path.startsWith(`${outer}[`);
}

/** One issue as `path: message`, an endpoint's path naming it: `notifications.webhook[4] (ops-hook).url: …`. */
export function formatConfigIssue(issue: ConfigIssue): string {
  const path =
    issue.endpoint === undefined
      ? issue.path
      : issue.path.replaceAll(
          /notifications\.(?:webhook|alertmanager)\[\d+\]/g,
          (at) => `${at} (${issue.endpoint})`,
        );
  return `${path}: ${issue.message}`;
}

export function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  return issues.map(formatConfigIssue).join("\n");
}

function zodIssues(error: z.ZodError): ConfigIssue[] {
  return error.issues.flatMap((issue) => {
    let path = "";
    for (const key of issue.path) {
      path += typeof key === "number" ? `[${key}]` : path === "" ? String(key) : `.${String(key)}`;
    }
    if (issue.code === "unrecognized_keys") {
      // Each unknown key on its own, with the known one it is likely a typo of.
      const known = knownKeys(fileSchema, issue.path);
      return issue.keys.map((k) => {
        const closest = closestKey(k, known);
        return {
          path: path ? `${path}.${k}` : k,
          message: `is not a known setting${closest ? ` (did you mean ${closest}?)` : ""}`,
        };
      });
    }
    return [{ path: path || "(root)", message: issue.message }];
  });
}

/**
 * A key the schema requires but the file (and environment) left out is named as missing,
 * "system.id: is required", rather than by zod's "expected string, received undefined".
 * Other issues keep their message (undefined defers to zod's own, or the schema's).
 */
function missingKey(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === "invalid_type" && issue.input === undefined ? "is required" : undefined;
}

/** Why the file could not be read, in words rather than Node's "ENOENT: …, open '…'". */
function unreadable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT")
    return "it does not exist (give the path of natsmon's YAML file with --config or NATSMON_CONFIG)";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a directory, not a file";
  return (err as Error).message;
}

function safeHostname(): string {
  // A node id must be a token; hostnames may carry dots.
  return osHostname().replaceAll(/[^A-Za-z0-9_-]/g, "-") || "natsmon";
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
