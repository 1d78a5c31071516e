/**
 * The node's metrics over HTTP, where `node.metrics-listen` asks for them: `GET /metrics`
 * answers what `ops.metrics` answers on the bus, in the Prometheus text format, so a
 * Prometheus server scrapes natsmon as it scrapes anything else (it cannot ask the bus).
 * Nothing else is served (404). With node.metrics-token-file every request needs its bearer
 * token (401 and a Bearer challenge otherwise), as Prometheus sends it from `authorization`'s
 * `credentials_file`. One route needs no framework: node's own HTTP server, as
 * prom-client's documentation serves a registry, keeps the node's heap (and so its heap
 * snapshots over ops.pprof) as it was.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { acceptsGzip, MetricsGzip } from "./metrics-gzip.ts";
import { metricsTokenCheck } from "./metrics-token.ts";
import { httpBaseUrl, type ListenAddress, type Logger, type NodeMetrics } from "../lib/index.ts";

export interface MetricsListener extends AsyncDisposable {
  /** Where the metrics are: `http://host:port/metrics`, with the port the OS chose for port 0. */
  readonly url: string;
}

export async function listenForMetrics(
  address: ListenAddress,
  metrics: NodeMetrics,
  log: Logger,
  options: { tokenFile?: string } = {},
): Promise<MetricsListener> {
  const compressed = new MetricsGzip();
  const tokenCheck = options.tokenFile ? await metricsTokenCheck(options.tokenFile, log) : undefined;
  const server = createServer((request, response) => {
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
  });
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
  const url = `${httpBaseUrl(address.host, (server.address() as AddressInfo).port)}/metrics`;
  log.info({ url }, "metrics served over HTTP");
  return {
    url,
    async [Symbol.asyncDispose]() {
      const closed = once(server, "close");
      server.close();
      // Keep-alive connections a Prometheus server holds open would keep the close waiting.
      server.closeAllConnections();
      await closed;
    },
  };
}
