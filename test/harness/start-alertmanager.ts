import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import type { TestCerts } from "./tls-certs.ts";
import { waitFor } from "./wait-for.ts";

/** The Debian name of the binary (upstream calls it `alertmanager`). */
const BINARY = "prometheus-alertmanager";
/** The one receiver of the test config; GET /api/v2/alerts lists it in `receivers`. */
export const ALERTMANAGER_RECEIVER = "harness";
/**
 * `--web.external-url` unless the caller gives one. The real port is only known after the
 * bind, and a fixed value keeps `externalURL` in webhook bodies the same on every run.
 */
export const DEFAULT_EXTERNAL_URL = "http://alertmanager.test";

/** Running Alertmanagers and their temporary directories. */
const live = new Map<ChildProcess, string>();
process.once("exit", () => {
  // Last resort: the harness never leaves an Alertmanager behind, even when a test crashes.
  for (const [child, dir] of live) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

/** An alert as GET /api/v2/alerts returns it (Alertmanager 0.25 OpenAPI `gettableAlert`). */
export interface GettableAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** RFC 3339 with milliseconds, in the zone the sender used. */
  readonly startsAt: string;
  /** The sender's endsAt, or receipt + resolve_timeout (5m) when it gave none. */
  readonly endsAt: string;
  readonly updatedAt: string;
  readonly fingerprint: string;
  /** Left out when the sender gave none. */
  readonly generatorURL?: string;
  readonly receivers: readonly { readonly name: string }[];
  readonly status: {
    readonly state: "unprocessed" | "active" | "suppressed";
    readonly silencedBy: readonly string[];
    readonly inhibitedBy: readonly string[];
  };
}

export interface AlertmanagerProcess extends AsyncDisposable {
  /** Base URL, e.g. `http://127.0.0.1:34567`, without a trailing slash. */
  readonly url: string;
  /** The `--web.external-url` it runs with (`externalURL` in its webhook bodies). */
  readonly externalUrl: string;
  readonly pid: number;
  /**
   * GET /api/v2/alerts. Alertmanager lists unresolved alerts only (an alert whose endsAt
   * has passed disappears at once); silenced and inhibited ones are listed as `suppressed`.
   * `filter` holds matchers such as `alertname="X"`, all of which must match.
   */
  alerts(filter?: string | readonly string[]): Promise<GettableAlert[]>;
  /** Everything it has logged so far (logfmt, debug level). */
  log(): string;
}

export interface AlertmanagerOptions {
  /** Where its one receiver posts webhooks (send_resolved on); without it the receiver sends nothing. */
  readonly webhookUrl?: string;
  /** Default {@link DEFAULT_EXTERNAL_URL}. */
  readonly externalUrl?: string;
  /** The executable; default `prometheus-alertmanager` on the PATH. */
  readonly binary?: string;
  /** Until GET /-/ready answers 200; default 20 s. */
  readonly readyTimeoutMs?: number;
  /**
   * Serve HTTPS with this certificate (its `--web.config.file`), and with `clientCa` require
   * and verify client certificates signed by it. The harness's own requests trust `ca` and
   * present `clientCert` and `clientKey`.
   */
  readonly tls?: {
    readonly cert: string;
    readonly key: string;
    readonly ca: string;
    readonly clientCa?: string;
    readonly clientCert?: string;
    readonly clientKey?: string;
  };
}

/**
 * The `tls` option of an Alertmanager served with the test server certificate that requires
 * client certificates signed by the test CA; the harness presents the test client's.
 */
export function requiringClientCerts(certs: TestCerts): NonNullable<AlertmanagerOptions["tls"]> {
  return {
    cert: certs.serverCert,
    key: certs.serverKey,
    ca: certs.ca,
    clientCa: certs.ca,
    clientCert: certs.clientCert,
    clientKey: certs.clientKey,
  };
}

/**
 * Starts a real Alertmanager (Debian's 0.25) on 127.0.0.1 and an OS-chosen port, without
 * gossip, with its config and storage in a temporary directory removed on dispose. The root
 * route groups by alertname and system with group_wait and group_interval 1s and
 * repeat_interval 1h. Resolves once GET /-/ready answers 200.
 */
export async function startAlertmanager(options: AlertmanagerOptions = {}): Promise<AlertmanagerProcess> {
  const binary = options.binary ?? BINARY;
  const externalUrl = options.externalUrl ?? DEFAULT_EXTERNAL_URL;
  const dir = await mkdtemp(join(tmpdir(), "natsmon-alertmanager-"));
  const configFile = join(dir, "alertmanager.yml");
  await writeFile(configFile, alertmanagerConfig(options.webhookUrl));
  const { tls } = options;
  const webConfigFile = join(dir, "web.yml");
  if (tls) await writeFile(webConfigFile, webConfig(tls));
  const dispatcher = tls
    ? new Agent({
        connect: {
          ca: await readFile(tls.ca),
          ...(tls.clientCert ? { cert: await readFile(tls.clientCert) } : {}),
          ...(tls.clientKey ? { key: await readFile(tls.clientKey) } : {}),
        },
      })
    : undefined;
  const get = (url: string) => fetch(url, dispatcher ? { dispatcher } : {});

  const child = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, "data")}`,
      // Port 0: the OS chooses, and Alertmanager logs the address it actually bound.
      "--web.listen-address=127.0.0.1:0",
      `--web.external-url=${externalUrl}`,
      // Empty: no HA gossip, which would otherwise bind 0.0.0.0:9094.
      "--cluster.listen-address=",
      "--log.level=debug",
      ...(tls ? [`--web.config.file=${webConfigFile}`] : []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  live.set(child, dir);
  let log = "";
  child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
  let spawnError: NodeJS.ErrnoException | undefined;
  child.once("error", (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      live.delete(child);
      resolve();
    };
    child.once("exit", done);
    // A binary that cannot be spawned emits "error" and never "exit".
    child.once("error", done);
  });
  const running = () => spawnError === undefined && child.exitCode === null && child.signalCode === null;

  const stop = async () => {
    if (running()) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
    await dispatcher?.close();
  };

  let outcome: { url: string } | { failure: string };
  try {
    outcome = await waitFor<{ url: string } | { failure: string }>(
      async () => {
        if (spawnError?.code === "ENOENT") {
          return {
            failure: `${binary} not found: install Debian's prometheus-alertmanager package (apt-get install -y prometheus-alertmanager)`,
          };
        }
        if (spawnError) return { failure: `${binary} could not start: ${spawnError.message}` };
        if (!running()) return { failure: `${binary} exited during start-up:\n${log.slice(-2000)}` };
        const address = /msg="Listening on" address=([\d.]+:\d+)/.exec(log)?.[1];
        if (address === undefined) return undefined;
        const base = `${tls ? "https" : "http"}://${address}`;
        return (await get(`${base}/-/ready`)).ok && { url: base };
      },
      { timeoutMs: options.readyTimeoutMs ?? 20_000, intervalMs: 50, message: `${binary} to be ready` },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}; its log:\n${log.slice(-2000)}`, { cause: err });
  }
  if ("failure" in outcome) {
    await stop();
    throw new Error(outcome.failure);
  }
  const { url } = outcome;

  return {
    url,
    externalUrl,
    pid: child.pid!,
    async alerts(filter = []) {
      const query = new URLSearchParams();
      for (const matcher of typeof filter === "string" ? [filter] : filter) query.append("filter", matcher);
      const response = await get(`${url}/api/v2/alerts?${query.toString()}`);
      const text = await response.text();
      if (!response.ok) throw new Error(`GET /api/v2/alerts answered ${response.status}: ${text}`);
      return JSON.parse(text) as GettableAlert[];
    },
    log: () => log,
    [Symbol.asyncDispose]: stop,
  };
}

/** The test config: one receiver, fast grouping (group_wait and group_interval 1s). */
function alertmanagerConfig(webhookUrl: string | undefined): string {
  return [
    "route:",
    `  receiver: ${ALERTMANAGER_RECEIVER}`,
    "  group_by: [alertname, system]",
    "  group_wait: 1s",
    "  group_interval: 1s",
    "  repeat_interval: 1h",
    "receivers:",
    `  - name: ${ALERTMANAGER_RECEIVER}`,
    ...(webhookUrl === undefined
      ? []
      : [
          "    webhook_configs:",
          `      - url: ${JSON.stringify(webhookUrl)}`,
          "        send_resolved: true",
        ]),
    "",
  ].join("\n");
}

/** Its `--web.config.file`: HTTPS, and client certificates required when a client CA is given. */
function webConfig(tls: NonNullable<AlertmanagerOptions["tls"]>): string {
  return [
    "tls_server_config:",
    `  cert_file: ${JSON.stringify(tls.cert)}`,
    `  key_file: ${JSON.stringify(tls.key)}`,
    ...(tls.clientCa
      ? [
          "  client_auth_type: RequireAndVerifyClientCert",
          `  client_ca_file: ${JSON.stringify(tls.clientCa)}`,
        ]
      : []),
    "",
  ].join("\n");
}
