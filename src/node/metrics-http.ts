/**
 * The node's metrics over HTTP, where `node.metrics-listen` asks for them: `GET /metrics`
 * answers what `ops.metrics` answers on the bus, in the Prometheus text format, so a
 * Prometheus server scrapes natsmon as it scrapes anything else (it cannot ask the bus).
 * Nothing else is served (404). With node.metrics-token-file every request needs its bearer
 * token (401 and a Bearer challenge otherwise), as Prometheus sends it from `authorization`'s
 * `credentials_file`. With node.metrics-tls the node serves HTTPS, a renewed certificate
 * from the next connection on, and with its client-ca only to clients with a certificate that
 * CA signed (Prometheus's `tls_config`). One route needs no framework: node's own HTTP server, as
 * prom-client's documentation serves a registry, keeps the node's heap (and so its heap
 * snapshots over ops.pprof) as it was.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { acceptsGzip, MetricsGzip } from "./metrics-gzip.ts";
import { metricsTokenCheck } from "./metrics-token.ts";
import {
  readListenerTls,
  renewListenerTls,
  type ListenerTlsNames,
  type MetricsTls,
} from "../config/index.ts";
import {
  httpBaseUrl,
  tlsServerOptions,
  type ListenAddress,
  type ListenerTls,
  type Logger,
  type NodeMetrics,
} from "../lib/index.ts";

const TLS_SETTINGS: ListenerTlsNames = {
  cert: "node.metrics-tls.cert",
  key: "node.metrics-tls.key",
  clientCa: "node.metrics-tls.client-ca",
};

export interface MetricsListener extends AsyncDisposable {
  /** Where the metrics are: `http://host:port/metrics`, with the port the OS chose for port 0. */
  readonly url: string;
}

export async function listenForMetrics(
  address: ListenAddress,
  metrics: NodeMetrics,
  log: Logger,
  options: { tokenFile?: string; tls?: MetricsTls } = {},
): Promise<MetricsListener> {
  const compressed = new MetricsGzip();
  const tokenCheck = options.tokenFile ? await metricsTokenCheck(options.tokenFile, log) : undefined;
  const tls = options.tls ? await readTls(options.tls) : undefined;
  const handle: RequestListener = (request, response) => {
    if (!tokenCheck) {
      serve(request, response);
      return;
    }
    tokenCheck().then(
      (check) => {
        const outcome = check(request.headers.authorization);
        if (outcome.kind === "ok") serve(request, response);
        else
          response
            .writeHead(401, {
              "content-type": "text/plain; charset=utf-8",
              "www-authenticate": outcome.challenge,
            })
            .end(`${outcome.description} (node.metrics-token-file)\n`);
      },
      (err: unknown) => {
        log.error({ err }, "checking the metrics token failed");
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics failed\n");
      },
    );
  };
  const server = tls ? createHttpsServer(tlsServerOptions(tls), handle) : createServer(handle);
  function serve(request: IncomingMessage, response: ServerResponse) {
    const path = new URL(request.url ?? "/", "http://any").pathname;
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response
        .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
        .end("not found: GET /metrics\n");
      return;
    }
    const gzip = acceptsGzip(request.headers["accept-encoding"]);
    metrics
      .renderAll()
      .then(async (rendered) => {
        const parts = gzip ? await compressed.body(rendered) : [rendered.own, ...rendered.figures.parts];
        const length = parts.reduce((n, part) => n + Buffer.byteLength(part), 0);
        response.writeHead(200, {
          "content-type": rendered.contentType,
          "content-length": length,
          vary: "Accept-Encoding",
          ...(gzip ? { "content-encoding": "gzip" } : {}),
        });
        if (request.method !== "HEAD") for (const part of parts) response.write(part);
        response.end();
      })
      .catch((err: unknown) => {
        log.error({ err }, "rendering the metrics failed");
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics failed\n");
      });
  }
  server.listen(address.port, address.host);
  try {
    await Promise.race([
      once(server, "listening"),
      once(server, "error").then(([err]) => Promise.reject(err as Error)),
    ]);
  } catch (err) {
    server.close();
    throw new Error(
      `cannot serve metrics at ${address.host}:${address.port} (node.metrics-listen): ${(err as Error).message}; ` +
        "give node.metrics-listen (NATSMON_NODE_METRICS_LISTEN) a free port, port 0 for any, or stop what listens there",
      { cause: err },
    );
  }
  const port = (server.address() as AddressInfo).port;
  const url = `${httpBaseUrl(address.host, port, tls ? "https" : "http")}/metrics`;
  log.info({ url }, tls ? "metrics served over HTTPS" : "metrics served over HTTP");
  const stopRenewing =
    options.tls && "setSecureContext" in server
      ? renewListenerTls(
          options.tls,
          TLS_SETTINGS,
          { intervalMs: options.tls.checkMs, server: "GET /metrics", log },
          (files) => server.setSecureContext(tlsServerOptions(files)),
        )
      : () => undefined;
  return {
    url,
    async [Symbol.asyncDispose]() {
      stopRenewing();
      const closed = once(server, "close");
      server.close();
      // Keep-alive connections a Prometheus server holds open would keep the close waiting.
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The files, read again as the node starts (the configuration checked them as it loaded). */
async function readTls(paths: MetricsTls): Promise<ListenerTls> {
  const problems: string[] = [];
  const files = await readListenerTls(paths, TLS_SETTINGS, problems);
  if (!files) throw new Error(`cannot serve GET /metrics over HTTPS: ${problems.join("; ")}`);
  return files;
}
