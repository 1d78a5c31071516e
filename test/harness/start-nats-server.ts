import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { natsServerConfig, startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";

/** Credentials of the test servers' system account. */
export const SYS_USER = { user: "sys", password: "sys-secret" } as const;
/** An application account user; clients without credentials land in the same account. */
export const APP_USER = { user: "app", password: "app-secret" } as const;

const live = new Set<NatsServerProcess>();
process.once("exit", () => {
  // Last resort: the harness never leaves a server behind, even when a test crashes.
  for (const server of live) server.kill("SIGKILL");
});

export interface ServerSpec {
  name: string;
  workDir: string;
  port: number;
  cluster?: { name: string; port: number; routes: string[] };
  /** Default true. */
  jetstream?: boolean;
  /** JetStream's memory and file storage limits, bytes; nats-server's defaults when absent. */
  jetstreamMax?: { memoryBytes?: number; fileBytes?: number };
  /** Config text appended as is (gateway and leafnodes blocks). */
  extraConfig?: string;
  /** Accounts besides SYS and APP (JetStream paging tests want many). */
  extraAccounts?: readonly TestAccount[];
}

/** An account of a test server, with one user named after it (password = user name). */
export interface TestAccount {
  name: string;
  jetstream?: boolean;
}

export function testServerConfig(spec: ServerSpec): string {
  const base = natsServerConfig({
    serverName: spec.name,
    host: "127.0.0.1",
    port: spec.port,
    workDir: spec.workDir,
    ...(spec.jetstream === false ? {} : { storeDir: storeDirOf(spec) }),
    ...(spec.jetstreamMax ? { jetstreamMax: spec.jetstreamMax } : {}),
    accounts: [
      { name: "SYS", users: [SYS_USER] },
      { name: "APP", jetstream: true, users: [APP_USER, { user: "local" }] },
      ...(spec.extraAccounts ?? []).map((a) => ({ ...a, users: [testAccountUser(a)] })),
    ],
    systemAccount: "SYS",
    noAuthUser: "local",
    ...(spec.cluster ? { cluster: { host: "127.0.0.1", ...spec.cluster } } : {}),
  });
  return spec.extraConfig ? base + spec.extraConfig : base;
}

/** The JetStream store directory of a spec's server (nats-server keeps its streams under `jetstream/` in it). */
export function storeDirOf(spec: ServerSpec): string {
  return join(spec.workDir, "jetstream");
}

/** The credentials of an extra account's one user. */
export function testAccountUser(account: TestAccount): { user: string; password: string } {
  const user = `u-${account.name.toLowerCase()}`;
  return { user, password: user };
}

/** Starts nats-server for a spec and tracks it for the exit hook. */
export async function launch(spec: ServerSpec): Promise<NatsServerProcess> {
  const server = await startNatsServer({ configText: testServerConfig(spec), workDir: spec.workDir });
  live.add(server);
  void server.exited.then(() => live.delete(server));
  return server;
}

export function portOf(url: string): number {
  return Number(new URL(url).port);
}

export interface TestServer extends AsyncDisposable {
  readonly name: string;
  /** Client URL; no credentials needed (APP account). */
  readonly url: string;
  readonly process: NatsServerProcess;
  stop(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
  /** Starts it again with the same name, ports and store. */
  restart(): Promise<void>;
}

/**
 * A single real nats-server with JetStream and a system account, on OS-chosen ports;
 * `extraAccounts` adds accounts besides SYS and APP; `extraConfig` is appended to its configuration.
 */
export async function startTestServer(
  name = "s1",
  options: { extraAccounts?: readonly TestAccount[]; extraConfig?: string } = {},
): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), `natsmon-nats-${name}-`));
  const spec: ServerSpec = { name, workDir: dir, port: -1, ...options };
  let proc = await launch(spec);
  spec.port = portOf(proc.clientUrl);
  return {
    name,
    get url() {
      return proc.clientUrl;
    },
    get process() {
      return proc;
    },
    stop: () => proc.stop(),
    async kill() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
    async restart() {
      await proc.stop();
      proc = await launch(spec);
    },
    async [Symbol.asyncDispose]() {
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
