import { maxHeaderSize } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import fastifyCompress from "@fastify/compress";
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify";
import { connectNats, discoverNodes, type ConnectTarget } from "../bus/index.ts";
import {
  AUTH_REALM,
  bearerCheck,
  httpBaseUrl,
  redactUrl,
  tlsServerOptions,
  tokenProblem,
  type ListenerTls,
  type Logger,
} from "../lib/index.ts";
import { API_VERSION_HEADER } from "../protocol/index.ts";
import { wantsCsv } from "./accept.ts";
import { checkSystemId } from "./check-system-id.ts";
import { answerClientError } from "./client-errors.ts";
import { watchBus, type BusLink } from "./bus-link.ts";
import { busUnavailable, DB_ACTIONS, forwardDb, mapBusFailure, type DbAction } from "./forward.ts";
import { errorReply, jsonReply, type GatewayReply } from "./replies.ts";

export interface GatewayOptions {
  /** The bus and the one identity every request is sent with (spec: HTTP gateway rule 5). */
  readonly bus: ConnectTarget;
  /** Required on every route except `GET /healthz`; absent only with `allowUnauthenticated`. */
  readonly authToken?: string | undefined;
  readonly allowUnauthenticated?: boolean;
  readonly host: string;
  /** 0 lets the OS choose; the handle tells which. */
  readonly port: number;
  /** How long one bus request may take; above the nodes' `db.query-timeout`, so their 408 arrives. */
  readonly requestTimeoutMs: number;
  /** How long `GET /systems` collects discovery replies. */
  readonly systemsWindowMs: number;
  /** Largest request body accepted; larger gets 413. */
  readonly bodyLimitBytes: number;
  /**
   * How long a client may take to send one whole request, headers and body; past it the
   * request gets 408 and the connection is closed. Unset: GATEWAY_DEFAULTS.receiveTimeoutMs.
   */
  readonly receiveTimeoutMs?: number;
  /**
   * Serve HTTPS with this certificate (its chain after it) and key, PEM; plain HTTP without.
   * With `clientCa`, every client must present a certificate that CA signed.
   */
  readonly https?: ListenerTls;
  readonly log: Logger;
}

export const GATEWAY_DEFAULTS = {
  listen: "127.0.0.1:8080",
  requestTimeoutMs: 35_000,
  systemsWindowMs: 1000,
  bodyLimitBytes: 1024 * 1024,
  receiveTimeoutMs: 30_000,
} as const;

/** A running gateway. Closing stops accepting, finishes in-flight requests, drains the bus. */
export interface Gateway extends AsyncDisposable {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, or `https://` when serving HTTPS. */
  readonly url: string;
  /**
   * Resolves with the reason if the bus connection closes for good (it reconnects through
   * outages and refused credentials, so this is rare): the gateway can then never answer.
   */
  readonly lost: Promise<Error>;
  /** Serves these files from the next TLS connection on (a renewal); HTTPS only. */
  serveHttps(files: ListenerTls): void;
  close(): Promise<void>;
}

/** Why the gateway refuses to start without a token (spec: Authentication 2). */
export const MISSING_TOKEN_MESSAGE =
  "the gateway refuses to start without a bearer token: give --auth-token (or NATSMON_GATEWAY_AUTH_TOKEN), " +
  "or --allow-unauthenticated to serve every route without authentication";

const HEALTHZ = "/healthz";
const DRAIN_TIMEOUT_MS = 10_000;
/** How long `GET /healthz` waits for the bus to answer a ping before calling it unresponsive. */
const HEALTH_ROUND_TRIP_MS = 2000;

/** Starts the HTTP gateway (spec: HTTP gateway): connects to the bus, then listens. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const token = options.authToken === "" ? undefined : options.authToken;
  if (token === undefined && options.allowUnauthenticated !== true) throw new Error(MISSING_TOKEN_MESSAGE);
  const unusable = token === undefined ? undefined : tokenProblem(token);
  if (unusable) throw new Error(`the auth token is refused: ${unusable}`);
  const log = options.log;
  if (token === undefined) log.warn("the gateway serves without authentication (--allow-unauthenticated)");

  const nc = await connectNats(options.bus, "natsmon-gateway").catch((cause: unknown) => {
    throw new Error(
      `cannot connect to the bus at ${redactUrl(options.bus.url)}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  });
  const link = watchBus(nc, log);
  let app;
  try {
    app = await buildApp(link, { ...options, authToken: token });
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    await link.close(DRAIN_TIMEOUT_MS);
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const url = httpBaseUrl(options.host, port, options.https ? "https" : "http");
  log.info({ url, bus: nc.getServer() }, "gateway listening");

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Fastify stops accepting, requests still arriving on open sockets get 503 (onRequest hook),
      // in-flight ones finish; only then is the bus drained, so their replies still arrive.
      await app.close();
      await link.close(DRAIN_TIMEOUT_MS);
      log.info("gateway stopped");
    })());
  const serveHttps = (files: ListenerTls) => {
    if (!options.https) throw new Error("the gateway serves plain HTTP: it has no certificate to renew");
    (app.server as HttpsServer).setSecureContext(tlsServerOptions(files));
  };
  return { host: options.host, port, url, lost: link.lost, serveHttps, close, [Symbol.asyncDispose]: close };
}

async function buildApp(link: BusLink, options: GatewayOptions) {
  const check = bearerCheck(options.authToken);
  /** The 401 for a request without the right token, sent; `undefined` lets it through. */
  const refuseUnauthorized = (request: FastifyRequest, reply: FastifyReply) => {
    const outcome = check(request.headers.authorization);
    if (outcome.kind === "ok") return undefined;
    return send(reply.header("WWW-Authenticate", outcome.challenge), errorReply(401, outcome.description));
  };

  const receiveTimeoutMs = options.receiveTimeoutMs ?? GATEWAY_DEFAULTS.receiveTimeoutMs;
  const server = {
    headersTimeout: receiveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(receiveTimeoutMs / 4))),
  };
  const app = Fastify({
    loggerInstance: options.log,
    bodyLimit: options.bodyLimitBytes,
    // Fastify turns Node's request timeout off, so a client trickling a body would hold its
    // connection for ever. One bound covers headers and body; Node checks it every
    // connectionsCheckingInterval (30 s by default, which would let a 1 s bound run to 31 s).
    requestTimeout: receiveTimeoutMs,
    // Node's HTTPS server takes the same bounds with its certificate (Fastify then ignores `http`).
    ...(options.https ? { https: { ...server, ...tlsServerOptions(options.https) } } : { http: server }),
    // The router's default limit of 100 characters per path parameter would answer a longer
    // system id with its own 414, before the token and id checks. Node refuses a request line
    // longer than its header limit, so with that as the limit the router never cuts an id short
    // and checkSystemId decides alone.
    routerOptions: { maxParamLength: maxHeaderSize },
    clientErrorHandler: answerClientError(options.log, receiveTimeoutMs),
    // Fastify's own 503 while closing has its own body; the onRequest hook answers in the gateway's.
    return503OnClosing: false,
    // What the router refuses itself (a malformed percent-encoding, say) skips the hooks, so the
    // token is checked here: an unauthenticated request to a protected path only ever gets 401.
    frameworkErrors: (error, request, reply) => {
      if (refuseUnauthorized(request, reply)) return;
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        send(reply, errorReply(status, error.message));
        return;
      }
      request.log.error({ err: error }, "request failed in the router");
      send(reply, errorReply(500, "internal server error"));
    },
  });

  // Answers of 1 KiB or more are compressed for a client that accepts it: a 100,000-row
  // result is 15.7 MB of JSON, 1.8 MB as gzip (170 ms). Brotli is left out: at the plugin's
  // quality it took 376 ms for 8% less.
  await app.register(fastifyCompress, { encodings: ["gzip", "deflate"], threshold: 1024 });

  // Bodies are checked to be JSON but forwarded as received: parsing and re-serialising would
  // round integers past 2^53. Any content type is read as JSON, so a plain `curl -d` works too.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    try {
      JSON.parse(text);
      done(null, text);
    } catch (cause) {
      done(Object.assign(new Error(`invalid JSON body: ${(cause as Error).message}`), { statusCode: 400 }));
    }
  });

  // A kept-alive socket would hold the close open until its keep-alive timeout; once closing,
  // each in-flight answer asks the client to close its socket, and Node then ends it.
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  app.addHook("onSend", (request, reply, payload, done) => {
    // An answer sent before the request's body is all in (a 401, say) ends the connection:
    // the rest of the body is not worth reading, and the receive timeout must not answer
    // the same request a second time.
    if (closing || !request.raw.complete) reply.header("connection", "close");
    done(null, payload);
  });

  app.addHook("onRequest", async (request, reply) => {
    if (closing) {
      return send(
        reply,
        errorReply(503, "the gateway is shutting down; send the request again (to another gateway)"),
      );
    }
    // Every body is read as JSON whatever its type, so a type Fastify cannot even parse
    // (`foo`, `;;`) must not stop it with a 415 before the body is read.
    if (request.raw.headers["content-type"] !== undefined)
      request.raw.headers["content-type"] = "application/json";
    if (request.routeOptions.url === HEALTHZ) return undefined;
    return refuseUnauthorized(request, reply);
  });

  app.get(HEALTHZ, async (_request, reply) => {
    const state = link.state();
    if (state !== "connected") return send(reply, jsonReply({ status: "unavailable", bus: state }, 503));
    // The client's state lags a server that stopped answering by minutes (its pings are
    // two minutes apart): a round trip tells.
    const rtt = await link.roundTrip(HEALTH_ROUND_TRIP_MS);
    if (rtt === undefined) {
      return send(
        reply,
        jsonReply({ status: "unavailable", bus: "unresponsive", server: link.nc.getServer() }, 503),
      );
    }
    const body = {
      status: "ok",
      bus: state,
      server: link.nc.getServer(),
      rtt_ms: Math.round(rtt * 100) / 100,
    };
    return send(reply, jsonReply(body));
  });

  app.get("/systems", async (request, reply) => {
    const unavailable = busUnavailable(link);
    if (unavailable) return send(reply, unavailable);
    let answer: GatewayReply;
    try {
      const ignored = { count: 0 };
      answer = jsonReply(await discoverNodes(link.nc, options.systemsWindowMs, ignored));
      if (ignored.count > 0) {
        request.log.warn(
          { ignored: ignored.count },
          "replies to the discovery ping that are not discovery replies were left out",
        );
      }
    } catch (err) {
      answer = mapBusFailure(err, { timeoutMs: options.systemsWindowMs });
    }
    return send(reply, answer);
  });

  for (const action of Object.keys(DB_ACTIONS) as DbAction[]) {
    app.post<{ Params: { system: string } }>(`/sys/:system/db/${action}`, async (request, reply) => {
      const { system } = request.params;
      const invalid = checkSystemId(system);
      if (invalid) return send(reply, invalid);
      const apiVersion = request.headers[API_VERSION_HEADER.toLowerCase()];
      const answer = await forwardDb(
        link,
        {
          system,
          action,
          body: typeof request.body === "string" ? request.body : "{}",
          csv: action === "query" && wantsCsv(request.headers.accept),
          apiVersion: typeof apiVersion === "string" ? apiVersion : undefined,
        },
        options.requestTimeoutMs,
      );
      return send(reply, answer);
    });
  }

  app.setNotFoundHandler(async (request, reply) => {
    // A known path asked with another method is 405 naming the ones it takes (RFC 9110, 15.5.6).
    const allowed = allowedMethods(request.url.split("?")[0] ?? "");
    if (allowed) {
      return send(
        reply.header("Allow", allowed),
        errorReply(405, `${request.method} is not served on this path; use ${allowed}`),
      );
    }
    return send(reply, errorReply(404, `no route ${request.method} ${request.url}`));
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const description =
        error.code === "FST_ERR_CTP_BODY_TOO_LARGE"
          ? `request body larger than the gateway's limit of ${options.bodyLimitBytes} bytes`
          : error.message;
      return send(reply, errorReply(status, description));
    }
    request.log.error({ err: error }, "request failed with an internal error");
    return send(reply, errorReply(500, "internal server error"));
  });
  return app;
}

const DB_PATH = new RegExp(`^/sys/[^/]+/db/(${Object.keys(DB_ACTIONS).join("|")})$`);

/** The methods a known path is served with, or undefined for a path the gateway does not serve. */
function allowedMethods(path: string): string | undefined {
  if (path === HEALTHZ || path === "/systems") return "GET, HEAD";
  return DB_PATH.test(path) ? "POST" : undefined;
}

/**
 * Sends an answer; handlers and hooks return the reply so Fastify knows it is sent. A 401
 * must carry a challenge (RFC 9110, 11.6.1): one relayed from upstream gets the gateway's.
 */
function send(reply: FastifyReply, answer: GatewayReply): FastifyReply {
  if (answer.status === 401 && !reply.hasHeader("WWW-Authenticate"))
    reply.header("WWW-Authenticate", `Bearer realm="${AUTH_REALM}"`);
  return reply.code(answer.status).type(answer.contentType).send(answer.body);
}
