import { untilStopSignal } from "./stop-signal.ts";
import type { Command } from "commander";
import { MAX_TIMER_MS, parseDuration, renewListenerTls } from "../config/index.ts";
import {
  GATEWAY_DEFAULTS,
  MISSING_TOKEN_MESSAGE,
  parseListenAddress,
  startGateway,
} from "../gateway/index.ts";
import { createLogger } from "../lib/index.ts";
import {
  clientCredentials,
  clientTls,
  DEFAULT_SERVER,
  fail,
  withClientOptions,
  type ClientOptions,
} from "./client.ts";
import { HTTPS_ENV, HTTPS_FLAGS, readHttpsFiles } from "./gateway-https.ts";

interface GatewayFlags extends ClientOptions {
  authToken?: string;
  allowUnauthenticated?: boolean;
  listen: string;
  requestTimeout: string;
  systemsWait: string;
  bodyLimit: string;
  receiveTimeout: string;
  httpsCert?: string;
  httpsKey?: string;
  httpsClientCa?: string;
  httpsCheck: string;
  logLevel: string;
}

const TOKEN_ENV = "NATSMON_GATEWAY_AUTH_TOKEN";
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"];

/** `natsmon gateway`: the HTTP bridge to the read-only db API; stops cleanly on SIGINT, SIGTERM or SIGHUP. */
export function gatewayCommand(program: Command): void {
  withClientOptions(
    program
      .command("gateway")
      .description("serve the read-only db API, GET /systems and GET /healthz over HTTP")
      .option(
        "--auth-token <token>",
        `bearer token required on every route but GET /healthz (env ${TOKEN_ENV})`,
      )
      .option("--allow-unauthenticated", "start without a token: every route is open")
      .option("--listen <addr>", "host:port to listen on ([ipv6]:port; port 0: any)", GATEWAY_DEFAULTS.listen)
      .option(
        "--request-timeout <duration>",
        "how long a system may take to answer; keep it above the nodes' db.query-timeout",
        `${GATEWAY_DEFAULTS.requestTimeoutMs / 1000}s`,
      )
      .option(
        "--systems-wait <duration>",
        "how long GET /systems collects discovery replies",
        `${GATEWAY_DEFAULTS.systemsWindowMs / 1000}s`,
      )
      .option(
        "--body-limit <bytes>",
        "largest request body accepted",
        String(GATEWAY_DEFAULTS.bodyLimitBytes),
      )
      .option(
        "--receive-timeout <duration>",
        "how long a client may take to send a whole request, headers and body; slower gets 408",
        `${GATEWAY_DEFAULTS.receiveTimeoutMs / 1000}s`,
      )
      .option(
        "--https-cert <file>",
        `serve HTTPS with this certificate, PEM, its chain after it (env ${HTTPS_ENV.cert})`,
      )
      .option("--https-key <file>", `the HTTPS certificate's private key, PEM (env ${HTTPS_ENV.key})`)
      .option(
        "--https-client-ca <file>",
        `require client certificates signed by this CA, PEM, on every connection (env ${HTTPS_ENV.clientCa})`,
      )
      .option(
        "--https-check <duration>",
        "how often the HTTPS files are checked for a renewed certificate, served without a restart",
        "1m",
      )
      .option("--log-level <level>", LOG_LEVELS.join(", "), process.env.NATSMON_LOG_LEVEL ?? "info"),
  ).action(async (flags: GatewayFlags) => {
    const token = flags.authToken ?? process.env[TOKEN_ENV];
    if (!token && !flags.allowUnauthenticated) {
      fail(MISSING_TOKEN_MESSAGE, 2);
      return;
    }
    let listen;
    try {
      listen = parseListenAddress(flags.listen);
    } catch (err) {
      fail((err as Error).message, 2);
      return;
    }
    const problems: string[] = [];
    /** A duration flag's value in ms, or a problem naming it: positive, and short enough to time. */
    const durationFlag = (flag: string, text: string, example: string): number => {
      const ms = parseDuration(text);
      if (!ms) problems.push(`${flag} ${text} is not a positive duration (e.g. ${example})`);
      else if (ms > MAX_TIMER_MS)
        problems.push(`${flag} ${text} is longer than 596h, the longest delay Node can time`);
      return ms ?? 0;
    };
    const requestTimeoutMs = durationFlag("--request-timeout", flags.requestTimeout, "35s");
    const systemsWindowMs = durationFlag("--systems-wait", flags.systemsWait, "1s");
    const receiveTimeoutMs = durationFlag("--receive-timeout", flags.receiveTimeout, "30s");
    const bodyLimitBytes = Number(flags.bodyLimit);
    if (!Number.isSafeInteger(bodyLimitBytes) || bodyLimitBytes <= 0) {
      problems.push(`--body-limit ${flags.bodyLimit} is not a positive number of bytes`);
    }
    if (!LOG_LEVELS.includes(flags.logLevel))
      problems.push(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
    const httpsCheckMs = durationFlag("--https-check", flags.httpsCheck, "1m");
    const httpsPaths = {
      cert: flags.httpsCert || process.env[HTTPS_ENV.cert],
      key: flags.httpsKey || process.env[HTTPS_ENV.key],
      clientCa: flags.httpsClientCa || process.env[HTTPS_ENV.clientCa],
    };
    const https = await readHttpsFiles(httpsPaths, problems);
    if (problems.length > 0) {
      fail(problems.join("\n"), 2);
      return;
    }

    const log = createLogger(flags.logLevel, { app: "natsmon-gateway" });
    const url = flags.server ?? process.env.NATS_URL ?? DEFAULT_SERVER;
    const tls = clientTls(flags);
    const gateway = await startGateway({
      bus: { url, ...clientCredentials(flags), ...(tls ? { tls } : {}) },
      ...(token ? { authToken: token } : {}),
      allowUnauthenticated: flags.allowUnauthenticated === true,
      ...listen,
      requestTimeoutMs,
      systemsWindowMs,
      bodyLimitBytes,
      receiveTimeoutMs,
      ...(https ? { https } : {}),
      log,
    }).catch((cause: unknown) => {
      throw new Error(`gateway did not start: ${(cause as Error).message}`, { cause });
    });
    const { cert: httpsCert, key: httpsKey } = httpsPaths;
    const stopRenewing =
      https && httpsCert && httpsKey
        ? renewListenerTls(
            { ...httpsPaths, cert: httpsCert, key: httpsKey },
            HTTPS_FLAGS,
            { intervalMs: httpsCheckMs, server: "the gateway", log },
            (files) => gateway.serveHttps(files),
          )
        : () => undefined;
    // The bus URL may carry credentials, so only the gateway's own address is printed.
    process.stdout.write(`natsmon gateway listens at ${gateway.url} (stop with Ctrl-C)\n`);

    // In-flight requests may run up to their own timeout before the stop gives up on them.
    const stopped = await Promise.race([
      untilStopSignal(log, Math.min(requestTimeoutMs + 15_000, MAX_TIMER_MS)).then(() => undefined),
      gateway.lost,
    ]);
    if (stopped) {
      // It reconnects through outages and refused credentials: a connection closed for good
      // cannot come back, and a supervisor restarting the process can.
      log.fatal({ err: stopped }, "the bus connection closed for good; exiting");
      stopRenewing();
      await gateway.close();
      process.exit(1);
    }
    stopRenewing();
    await gateway.close();
    process.exit(0);
  });
}
