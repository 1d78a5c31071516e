import { untilStopSignal } from "./stop-signal.ts";
import type { Command } from "commander";
import { parseDuration } from "../config/index.ts";
import {
  GATEWAY_DEFAULTS,
  MISSING_TOKEN_MESSAGE,
  parseListenAddress,
  startGateway,
} from "../gateway/index.ts";
import { createLogger } from "../lib/index.ts";
import { DEFAULT_SERVER, fail, withClientOptions, type ClientOptions } from "./client.ts";

interface GatewayFlags extends ClientOptions {
  authToken?: string;
  allowUnauthenticated?: boolean;
  listen: string;
  requestTimeout: string;
  systemsWait: string;
  bodyLimit: string;
  receiveTimeout: string;
  logLevel: string;
}

const TOKEN_ENV = "NATSMON_GATEWAY_AUTH_TOKEN";
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"];

/** `natsmon gateway`: the HTTP bridge to the read-only db API; stops cleanly on SIGINT or SIGTERM. */
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
    const requestTimeoutMs = parseDuration(flags.requestTimeout);
    const systemsWindowMs = parseDuration(flags.systemsWait);
    const bodyLimitBytes = Number(flags.bodyLimit);
    const receiveTimeoutMs = parseDuration(flags.receiveTimeout);
    const problems = [
      !requestTimeoutMs
        ? `--request-timeout ${flags.requestTimeout} is not a positive duration (e.g. 35s)`
        : "",
      !systemsWindowMs ? `--systems-wait ${flags.systemsWait} is not a positive duration (e.g. 1s)` : "",
      !Number.isSafeInteger(bodyLimitBytes) || bodyLimitBytes <= 0
        ? `--body-limit ${flags.bodyLimit} is not a positive number of bytes`
        : "",
      !receiveTimeoutMs
        ? `--receive-timeout ${flags.receiveTimeout} is not a positive duration (e.g. 30s)`
        : "",
      LOG_LEVELS.includes(flags.logLevel) ? "" : `--log-level must be one of ${LOG_LEVELS.join(", ")}`,
    ].filter((p) => p !== "");
    if (problems.length > 0 || !requestTimeoutMs || !systemsWindowMs || !receiveTimeoutMs) {
      fail(problems.join("\n"), 2);
      return;
    }

    const log = createLogger(flags.logLevel, { app: "natsmon-gateway" });
    const url = flags.server ?? process.env.NATS_URL ?? DEFAULT_SERVER;
    const gateway = await startGateway({
      bus: {
        url,
        ...(flags.creds ? { creds: flags.creds } : {}),
        ...(flags.user ? { user: flags.user } : {}),
        ...(flags.password ? { password: flags.password } : {}),
        ...(flags.token ? { token: flags.token } : {}),
      },
      ...(token ? { authToken: token } : {}),
      allowUnauthenticated: flags.allowUnauthenticated === true,
      ...listen,
      requestTimeoutMs,
      systemsWindowMs,
      bodyLimitBytes,
      receiveTimeoutMs,
      log,
    }).catch((cause: unknown) => {
      throw new Error(`gateway did not start: ${(cause as Error).message}`, { cause });
    });
    // The bus URL may carry credentials, so only the gateway's own address is printed.
    process.stdout.write(`natsmon gateway listens at ${gateway.url} (stop with Ctrl-C)\n`);

    // In-flight requests may run up to their own timeout before the stop gives up on them.
    await untilStopSignal(log, requestTimeoutMs + 15_000);
    await gateway.close();
    process.exit(0);
  });
}
