import { constants } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { RawConfig, RawSystem } from "./schema.ts";
import type { Salvaged } from "./salvage.ts";
import { tokenFileProblem } from "../lib/index.ts";
import { credsProblem } from "./creds-file.ts";
import { nkeyProblem } from "./nkey-file.ts";
import { caProblem, certProblem, keyMatchesCert, keyProblem } from "./tls-files.ts";

interface Issue {
  path: string;
  message: string;
}

/** A setting that names a file: NATS credentials, TLS PEM files, or the nats-server binary to run. */
interface FileSetting {
  readonly path: string;
  readonly file: string;
  readonly use: "creds" | "nkey" | "run" | "token" | Pem;
}

type Pem = "tls-ca" | "tls-cert" | "tls-key";

/** How each file read whole is checked. */
const CONTENT_CHECKS: Record<"creds" | "nkey" | "token" | Pem, (content: Buffer) => string | undefined> = {
  creds: credsProblem,
  token: tokenFileProblem,
  nkey: nkeyProblem,
  "tls-ca": caProblem,
  "tls-cert": (content) => certProblem(content),
  "tls-key": keyProblem,
};

/**
 * The files the configuration names, checked the way the node will use them, so that a
 * missing or unreadable one, or credentials the NATS client cannot use, is refused with its
 * path at start-up (and by `config check`) instead of failing later: a system's credentials as a system that can never be reached
 * (retried for ever), the sink's as a sink without JetStream. This is the one part of
 * validation that reads the filesystem, so it runs in the load step, after the schema, on
 * whatever of the file passed it. Relative paths are taken from the working directory, as
 * the node opens them.
 */
export async function fileIssues(
  view: Salvaged<RawConfig>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Issue[]> {
  const settings = fileSettings(view);
  const problems = await Promise.all(
    settings.map(async (s) => {
      const problem =
        s.use === "run" ? await runProblem(s.file, env) : await readProblem(s.file, CONTENT_CHECKS[s.use]);
      return problem === undefined ? undefined : { path: s.path, message: problem };
    }),
  );
  const issues = problems.filter((p) => p !== undefined);
  return [...issues, ...(await pairIssues(settings, issues))];
}

/**
 * A client certificate and a key that are each sound but not of one pair: the handshake
 * would fail on every connection. Checked only where neither file has a problem of its own.
 */
async function pairIssues(settings: readonly FileSetting[], found: readonly Issue[]): Promise<Issue[]> {
  const faulty = new Set(found.map((i) => i.path));
  const issues: Issue[] = [];
  for (const cert of settings.filter((s) => s.use === "tls-cert" && !faulty.has(s.path))) {
    const at = cert.path.slice(0, -".cert".length);
    const key = settings.find((s) => s.use === "tls-key" && s.path === `${at}.key`);
    if (!key || faulty.has(key.path)) continue;
    try {
      if (!(await stat(cert.file)).isFile() || !(await stat(key.file)).isFile()) continue;
      if (!keyMatchesCert(await readFile(cert.file), await readFile(key.file))) {
        issues.push({
          path: key.path,
          message: `${named(key.file)} is not the private key of the certificate in ${cert.path} (${named(cert.file)})`,
        });
      }
    } catch {
      // Read errors were reported by the checks of each file.
    }
  }
  return issues;
}

function fileSettings(view: Salvaged<RawConfig>): FileSetting[] {
  const settings: FileSetting[] = [];
  const creds = (path: string, file: string | undefined, use: "creds" | "nkey" = "creds") => {
    // An empty value is no value: the node connects without credentials.
    if (file) settings.push({ path, file, use });
  };
  const tls = (at: string, files: { ca?: string; cert?: string; key?: string } | undefined) => {
    if (files?.ca) settings.push({ path: `${at}.tls.ca`, file: files.ca, use: "tls-ca" });
    if (files?.cert) settings.push({ path: `${at}.tls.cert`, file: files.cert, use: "tls-cert" });
    if (files?.key) settings.push({ path: `${at}.tls.key`, file: files.key, use: "tls-key" });
  };
  const token = view.node?.["metrics-token-file"];
  if (token) settings.push({ path: "node.metrics-token-file", file: token, use: "token" });
  const served = view.node?.["metrics-tls"];
  if (served?.cert) settings.push({ path: "node.metrics-tls.cert", file: served.cert, use: "tls-cert" });
  if (served?.key) settings.push({ path: "node.metrics-tls.key", file: served.key, use: "tls-key" });
  if (served?.["client-ca"])
    settings.push({ path: "node.metrics-tls.client-ca", file: served["client-ca"], use: "tls-ca" });
  // The sink's credentials are used even with the embedded sink, by the commands that
  // connect to the node's bus as its configuration names it (deliveries, notify).
  creds("sink.creds", view.sink?.creds);
  creds("sink.nkey", view.sink?.nkey, "nkey");
  tls("sink", view.sink?.tls);
  const binary = view.sink?.embedded?.binary;
  // The binary is started only when there is no sink.url.
  if (binary && !view.sink?.url) settings.push({ path: "sink.embedded.binary", file: binary, use: "run" });
  for (const type of ["webhook", "alertmanager"] as const) {
    (view.notifications?.[type] ?? []).forEach((endpoint, i) =>
      tls(`notifications.${type}[${i}]`, endpoint?.tls),
    );
  }
  for (const [at, system] of namedSystems(view)) {
    creds(`${at}.nats.creds`, system?.nats?.creds);
    creds(`${at}.nats.nkey`, system?.nats?.nkey, "nkey");
    tls(`${at}.nats`, system?.nats?.tls);
    (system?.nats?.accounts ?? []).forEach((account, j) => {
      creds(`${at}.nats.accounts[${j}].creds`, account?.creds);
      creds(`${at}.nats.accounts[${j}].nkey`, account?.nkey, "nkey");
      tls(`${at}.nats.accounts[${j}]`, account?.tls);
    });
  }
  return settings;
}

/** The file's systems with their paths: `system`, and each `systems[i]`. */
export function namedSystems(view: Salvaged<RawConfig>): [string, Salvaged<RawSystem> | undefined][] {
  return [
    ["system", view.system],
    ...(view.systems ?? []).map((s, i) => [`systems[${i}]`, s] as [string, Salvaged<RawSystem> | undefined]),
  ];
}

/** `file` as the message names it: a relative path with where it lies. */
function named(file: string): string {
  return isAbsolute(file) ? file : `${file} (${resolve(file)})`;
}

/**
 * A file read whole and checked by `check`. A pipe or device is only checked for access:
 * reading it here would take what the node has to read.
 */
async function readProblem(
  file: string,
  check: (content: Buffer) => string | undefined,
): Promise<string | undefined> {
  const missing = await kindProblem(file);
  if (missing) return missing;
  try {
    if (!(await stat(file)).isFile()) {
      await access(file, constants.R_OK);
      return undefined;
    }
    const problem = check(await readFile(file));
    return problem === undefined ? undefined : `${named(file)} ${problem}`;
  } catch (err) {
    return `${named(file)} cannot be read: ${reason(err)}`;
  }
}

/**
 * The nats-server binary: a path, or a bare name that the node's spawn looks up on PATH
 * (of the environment natsmon was given).
 */
async function runProblem(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  if (!file.includes("/")) {
    for (const dir of (env.PATH ?? "").split(delimiter)) {
      if (dir && (await executable(join(dir, file)))) return undefined;
    }
    return `${file} is not found on PATH`;
  }
  const missing = await kindProblem(file);
  if (missing) return missing;
  return (await executable(file)) ? undefined : `${named(file)} is not executable`;
}

/** That `file` is there and is not a directory. */
async function kindProblem(file: string): Promise<string | undefined> {
  try {
    const s = await stat(file);
    return s.isDirectory() ? `${named(file)} is a directory, not a file` : undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return `${named(file)} does not exist`;
    return `${named(file)} cannot be read: ${reason(err)}`;
  }
}

async function executable(file: string): Promise<boolean> {
  try {
    if ((await stat(file)).isDirectory()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The system's reason without Node's prefix: "permission denied", not "EACCES: permission denied, access '…'". */
function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "EACCES" || e.code === "EPERM") return "permission denied";
  return e.message;
}
