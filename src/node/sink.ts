import { errors, type NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  connectNats,
  startEmbeddedSink,
  tlsHint,
  type ConnectTarget,
  type EmbeddedSink,
} from "../bus/index.ts";
import type { Config } from "../config/index.ts";
import { redactUrl, settlesWithin, type Logger } from "../lib/index.ts";

/** How long a stop waits for natsmon's connection to the sink to drain. */
const DRAIN_MS = 2_000;

export interface Sink extends AsyncDisposable {
  readonly nc: NatsConnection;
  /** Where clients reach the bus (the embedded server's URL, or sink.url), any password in it redacted. */
  readonly url: string;
  readonly embedded: EmbeddedSink | undefined;
  /** The sink itself through its system account, when natsmon knows one (embedded). */
  readonly systemTarget: ConnectTarget | undefined;
  /** Server version of the sink, e.g. "2.9.10". */
  readonly version: string;
}

/**
 * The bus natsmon lives on: the configured `sink.url`, or an embedded nats-server started
 * as a child process when none is configured. JetStream must be available on it.
 */
export async function startSink(
  config: Config,
  nodeId: string,
  log: Logger,
  options: {
    /** The waits between failed starts of the embedded server after it exited (tests shorten them). */
    restartDelaysMs?: readonly number[];
  } = {},
): Promise<Sink> {
  const embedded = config.sink.url
    ? undefined
    : await startEmbeddedSink(config.sink, config.node.dataDir, log.child({ source: "nats-server" }), {
        log,
        ...(options.restartDelaysMs ? { retryDelaysMs: options.restartDelaysMs } : {}),
      });
  const target: ConnectTarget = embedded?.sink ?? { ...config.sink, url: config.sink.url! };
  let nc: NatsConnection | undefined;
  try {
    nc = await connectNats(target, `natsmon ${nodeId}`);
    await jetstreamManager(nc).then((jsm) => jsm.getAccountInfo());
  } catch (err) {
    // A connection left open (connected, but no JetStream) would keep the process from exiting.
    await nc?.close().catch(() => undefined);
    await embedded?.[Symbol.asyncDispose]();
    throw new Error(
      `cannot use the sink bus at ${redactUrl(target.url)}: ${(err as Error).message}. ${sinkHint(err, target)}`,
      {
        cause: err,
      },
    );
  }
  return {
    nc,
    url: redactUrl(embedded?.server.clientUrl ?? target.url),
    embedded,
    systemTarget: embedded?.system,
    version: nc.info?.version ?? "unknown",
    async [Symbol.asyncDispose]() {
      // A sink that does not answer (stuck on a full disk) never completes a drain.
      if (!(await settlesWithin(nc.drain(), DRAIN_MS))) {
        await nc.close().catch(() => undefined);
        if (embedded && !embedded.server.hasExited()) {
          // Stuck as nats-server 2.9.10 is after a failed write, it would ignore SIGTERM too.
          log.warn({ pid: embedded.server.pid }, "the embedded nats-server does not answer; killing it");
          await embedded.kill();
          return;
        }
        if (embedded) {
          // Killed or crashed, and not started again yet: nothing answered because nothing runs.
          log.info(
            { pid: embedded.server.pid },
            "the embedded nats-server had already exited; nothing to kill",
          );
        }
      }
      await embedded?.[Symbol.asyncDispose]();
    },
  };
}

/** What to do about a sink that could not be used, by what failed. */
function sinkHint(err: unknown, target: ConnectTarget): string {
  const tls = tlsHint(err, target, "sink.tls");
  if (tls) return tls;
  if (err instanceof errors.AuthorizationError || err instanceof errors.UserAuthenticationExpiredError) {
    return "The server refused natsmon's credentials: check sink.user and sink.password, sink.creds, sink.nkey or sink.token.";
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/refused|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|timeout/i.test(message)) {
    return "No NATS server answered there: check sink.url, and that the server runs and is reachable from here.";
  }
  return "natsmon needs a NATS server with JetStream enabled for its account.";
}
