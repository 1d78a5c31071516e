import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { SinkConfig } from "../config/index.ts";
import { silentLogger, type Logger } from "../lib/index.ts";
import { EMBEDDED_SERVER_NAME } from "../protocol/index.ts";
import type { ConnectTarget } from "./connect.ts";
import { natsServerConfig } from "./nats-server-config.ts";
import { isStorageFault, type NatsServerLogLine } from "./nats-server-log.ts";
import { startNatsServer, type NatsServerProcess } from "./nats-server-process.ts";
import { superviseServer, type ServerRestart } from "./embedded-supervisor.ts";

/**
 * Go's garbage-collector target for the embedded server, unless natsmon's own environment
 * sets GOGC (Go's own knob, then passed through unchanged). Go's default (100) collects so
 * often that relaying large messages is mostly collection: a 113 MB db.query.stream cost the
 * server 0.68 s of CPU at 100 and 0.25 s at 400, for a peak RSS of 45 MB instead of 27 MB
 * (bench:query's result, 2 vCPUs). The bus natsmon starts for itself carries scrapes, epochs
 * and streamed results, all of them large messages.
 */
export const EMBEDDED_GOGC = "400";

/** Account names of the embedded server. */
export const EMBEDDED_ACCOUNT = { system: "SYS", monitor: "MON" } as const;

export interface EmbeddedSink extends AsyncDisposable {
  /** The running server; another one after `restart()`. */
  readonly server: NatsServerProcess;
  /** The directory of its JetStream store (under the data dir). */
  readonly storeDir: string;
  /**
   * The last thing the server logged about its JetStream storage failing (a disk full,
   * storage limits exceeded, JetStream disabled) since it (re)started, if anything.
   */
  storageFault(): string | undefined;
  /**
   * Kills the server and starts it again on the same port, store and credentials, so
   * natsmon's connections reconnect to it. SIGKILL, not SIGTERM: the server this is for
   * (JetStream stuck after a write error) does not finish a graceful shutdown. `cause` says
   * why, for restartCause(). A start that fails rejects, and is tried again as after an exit.
   */
  restart(cause: string): Promise<void>;
  /**
   * When natsmon last started the server again, if it ever did: by `restart()`, or because
   * it exited while natsmon did not ask it to (see embedded-supervisor.ts).
   */
  restartedAt(): Date | undefined;
  /** Why natsmon last started the server again ("it exited unexpectedly (killed by SIGKILL)"). */
  restartCause(): string | undefined;
  /** When and why natsmon last started the server again, if it did: for messages naming both. */
  lastRestart(): ServerRestart | undefined;
  /** Resolves, with why, once natsmon gives up starting the server again: the node has no bus. */
  readonly gaveUp: Promise<string>;
  /** Stops supervising the server and kills it at once (a stuck server ignores SIGTERM). */
  kill(): Promise<void>;
  /** natsmon's own connection: the MON account, where its streams and API live. */
  readonly sink: ConnectTarget;
  /** The system account, so natsmon monitors its own bus. */
  readonly system: ConnectTarget;
}

/**
 * Starts the embedded nats-server: JetStream on with its store under the data dir, a
 * system account with a generated user (natsmon monitors itself through it), and a MON
 * account that local clients without credentials land in (`no_auth_user`), so
 * `natsmon query` and the `nats` tools work next to it with no set-up.
 */
export async function startEmbeddedSink(
  config: SinkConfig,
  dataDir: string,
  log: Logger = silentLogger(),
  supervision: {
    /** natsmon's own log, for the exits and restarts of the server. */
    log?: Logger;
    /** The waits between failed starts (default RETRY_DELAYS_MS). */
    retryDelaysMs?: readonly number[];
  } = {},
): Promise<EmbeddedSink> {
  const workDir = join(dataDir, "nats");
  const storeDir = join(workDir, "jetstream");
  const monitorPassword = randomBytes(18).toString("base64url");
  const systemPassword = randomBytes(18).toString("base64url");
  let storageFault: string | undefined;
  const onLog = (line: NatsServerLogLine, ready: boolean) => {
    // Its start-up banner is chatter; what it says once running is what an operator needs.
    log[ready ? line.level : "debug"](line.text);
    if (isStorageFault(line.text)) storageFault = line.text;
  };
  const start = (port: number) =>
    startNatsServer({
      workDir,
      env: { GOGC: process.env.GOGC ?? EMBEDDED_GOGC },
      onLog,
      ownProcessGroup: true,
      ...(config.embedded.binary ? { binary: config.embedded.binary } : {}),
      configText: natsServerConfig({
        serverName: EMBEDDED_SERVER_NAME,
        host: config.embedded.host,
        port,
        workDir,
        storeDir,
        maxPayload: 8 * 1024 * 1024,
        accounts: [
          { name: EMBEDDED_ACCOUNT.system, users: [{ user: "natsmon-sys", password: systemPassword }] },
          {
            name: EMBEDDED_ACCOUNT.monitor,
            jetstream: true,
            users: [{ user: "natsmon", password: monitorPassword }, { user: "local" }],
          },
        ],
        systemAccount: EMBEDDED_ACCOUNT.system,
        noAuthUser: "local",
      }),
    });
  let server: NatsServerProcess;
  try {
    server = await start(config.embedded.port);
  } catch (err) {
    const message = (err as Error).message;
    if (/address already in use/.test(message)) {
      throw new Error(
        `the embedded nats-server cannot listen on ${config.embedded.host}:${config.embedded.port}: the port is in use. ` +
          "Stop whatever uses it, or choose another with sink.embedded.port (NATSMON_SINK_EMBEDDED_PORT; -1 picks a free one).",
        { cause: err },
      );
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
      throw new Error(
        `the embedded nats-server cannot keep its store under the data dir (${workDir}): ${code === "EROFS" ? "read-only file system" : "permission denied"}. ` +
          "Give natsmon's user write access to node.data-dir, or choose another with node.data-dir (NATSMON_NODE_DATA_DIR, --data-dir).",
        { cause: err },
      );
    }
    throw err;
  }
  const clientUrl = server.clientUrl;
  const supervisor = superviseServer({
    server,
    start: () => {
      storageFault = undefined;
      // The port it was given (an OS-chosen one included): clients reconnect to the same URL.
      return start(Number(new URL(clientUrl).port));
    },
    log: supervision.log ?? log,
    ...(supervision.retryDelaysMs ? { retryDelaysMs: supervision.retryDelaysMs } : {}),
  });
  return {
    get server() {
      return supervisor.server;
    },
    storeDir,
    storageFault: () => storageFault,
    restart: (cause) => supervisor.restart(cause),
    restartedAt: () => supervisor.restartedAt(),
    restartCause: () => supervisor.restartCause(),
    lastRestart: () => supervisor.lastRestart(),
    gaveUp: supervisor.gaveUp,
    kill: () => supervisor.stop("kill"),
    sink: { url: clientUrl, user: "natsmon", password: monitorPassword },
    system: { url: clientUrl, user: "natsmon-sys", password: systemPassword },
    [Symbol.asyncDispose]: () => supervisor.stop("term"),
  };
}
