import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.ts";

/** One series of an instant query's vector result. */
export interface PromSeries {
  readonly metric: Readonly<Record<string, string>>;
  /** [unix seconds, value as text] */
  readonly value: readonly [number, string];
}

export interface PrometheusProcess extends AsyncDisposable {
  /** Base URL, e.g. `http://127.0.0.1:34567`. */
  readonly url: string;
  /** GET /api/v1/query: the vector an instant query gives; a failed query throws its error. */
  query(expr: string): Promise<PromSeries[]>;
  log(): string;
}

/**
 * Starts Debian's real Prometheus (the `prometheus` package, as promtool) on 127.0.0.1 and an
 * OS-chosen port, scraping `targets` (host:port, path /metrics) every second as job `natsmon`,
 * its storage in a temporary directory removed on dispose. Resolves once GET /-/ready answers.
 */
export async function startPrometheus(
  targets: readonly string[],
  options: {
    /** Sent as the bearer token of each scrape (`authorization.credentials_file`). */ credentialsFile?: string;
    /** Scrape over HTTPS trusting `caFile`, with the client certificate `certFile` and `keyFile` if given. */
    tls?: { caFile: string; certFile?: string; keyFile?: string };
  } = {},
): Promise<PrometheusProcess> {
  const dir = await mkdtemp(join(tmpdir(), "natsmon-prometheus-"));
  const config = join(dir, "prometheus.yml");
  await writeFile(
    config,
    [
      "global: {scrape_interval: 1s, evaluation_interval: 1s}",
      "scrape_configs:",
      "  - job_name: natsmon",
      `    static_configs: [{targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}]}]`,
      ...(options.credentialsFile
        ? [`    authorization: {credentials_file: ${JSON.stringify(options.credentialsFile)}}`]
        : []),
      ...(options.tls
        ? [
            "    scheme: https",
            `    tls_config: {${[
              `ca_file: ${JSON.stringify(options.tls.caFile)}`,
              ...(options.tls.certFile ? [`cert_file: ${JSON.stringify(options.tls.certFile)}`] : []),
              ...(options.tls.keyFile ? [`key_file: ${JSON.stringify(options.tls.keyFile)}`] : []),
            ].join(", ")}}`,
          ]
        : []),
      "",
    ].join("\n"),
  );
  const child = spawn(
    "prometheus",
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      "--web.listen-address=127.0.0.1:0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  let url: string;
  try {
    url = await waitFor(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`prometheus exited during start-up:\n${log.slice(-2000)}`);
        const address = /msg="Listening on" address=([\d.]+:\d+)/.exec(log)?.[1];
        return address !== undefined && (await fetch(`http://${address}/-/ready`)).ok && `http://${address}`;
      },
      { timeoutMs: 20_000, intervalMs: 50, message: "prometheus to be ready" },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data?: { resultType: string; result: PromSeries[] };
      };
      if (body.status !== "success") throw new Error(`${expr}: ${body.error}`);
      return body.data?.resultType === "vector" ? body.data.result : [];
    },
    log: () => log,
    [Symbol.asyncDispose]: stop,
  };
}
