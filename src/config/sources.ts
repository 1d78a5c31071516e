/**
 * Environment and flag overrides. Each settable leaf path is listed once; its env name is
 * `NATSMON_` + the path upper-cased with `.` and `-` as `_` (architecture.md §8).
 * Notifications are never set this way (spec: endpoints come only from the YAML file).
 */
type Kind = "string" | "number" | "boolean" | "list";

const LEAVES: Record<string, Kind> = {
  "node.id": "string",
  "node.data-dir": "string",
  "node.metrics-listen": "string",
  "node.metrics-nats": "string",
  "node.metrics-token-file": "string",
  "node.metrics-tls.cert": "string",
  "node.metrics-tls.key": "string",
  "node.metrics-tls.client-ca": "string",
  "node.metrics-tls.check": "string",
  "sink.url": "string",
  "sink.creds": "string",
  "sink.nkey": "string",
  "sink.user": "string",
  "sink.password": "string",
  "sink.token": "string",
  "sink.tls.ca": "string",
  "sink.tls.cert": "string",
  "sink.tls.key": "string",
  "sink.replicas": "number",
  "sink.embedded.host": "string",
  "sink.embedded.port": "number",
  "sink.embedded.binary": "string",
  "system.id": "string",
  "system.roles": "list",
  "system.nats.url": "string",
  "system.nats.creds": "string",
  "system.nats.nkey": "string",
  "system.nats.user": "string",
  "system.nats.password": "string",
  "system.nats.token": "string",
  "system.nats.tls.ca": "string",
  "system.nats.tls.cert": "string",
  "system.nats.tls.key": "string",
  "scraper.interval": "string",
  "scraper.quiet": "string",
  "scraper.timeout": "string",
  "scraper.disconnect-bucket": "string",
  "scraper.disconnect-history": "string",
  "scraper.forget-after": "string",
  "scraper.stream.max-age": "string",
  "scraper.stream.max-bytes": "string",
  "db.retention": "string",
  "db.memory-limit": "string",
  "db.checkpoint-threshold": "string",
  "db.threads": "number",
  "db.query-max-rows": "number",
  "db.query-timeout": "string",
  "db.query-stream.max-rows": "number",
  "db.query-stream.window": "number",
  "db.query-stream.compression": "string",
  "db.query-stream.ack-timeout": "string",
  "db.memory-profile.enabled": "boolean",
  "db.memory-profile.interval": "string",
  "disabled-checks": "list",
  "web.external-url": "string",
  "log.level": "string",
};

export function envName(path: string): string {
  return "NATSMON_" + path.toUpperCase().replaceAll(/[.-]/g, "_");
}

function coerce(kind: Kind, value: string): unknown {
  switch (kind) {
    case "number":
      return value.trim() !== "" && !Number.isNaN(Number(value)) ? Number(value) : value;
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "list":
      return value
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
    case "string":
      return value;
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1)!] = value;
}

export interface OverrideIssue {
  path: string;
  message: string;
}

/** Applies env, then flags, onto the parsed file (env < flags). */
export function applyOverrides(
  raw: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  flags: Readonly<Record<string, unknown>>,
): OverrideIssue[] {
  const issues: OverrideIssue[] = [];
  for (const [path, kind] of Object.entries(LEAVES)) {
    const value = env[envName(path)];
    if (value !== undefined) setPath(raw, path, coerce(kind, value));
  }
  for (const [path, value] of Object.entries(flags)) {
    if (value === undefined) continue;
    const kind = LEAVES[path];
    if (!kind) {
      issues.push({ path, message: "is not a setting that a flag can set" });
      continue;
    }
    setPath(raw, path, typeof value === "string" ? coerce(kind, value) : value);
  }
  return issues;
}
