import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { lineSplitter, parseNatsServerLogLine, type NatsServerLogLine } from "./nats-server-log.ts";

export interface NatsServerPorts {
  nats?: string[];
  monitoring?: string[];
  cluster?: string[];
}

/** How a nats-server process ended: its exit code, or the signal that killed it. */
export interface NatsServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface NatsServerProcess extends AsyncDisposable {
  readonly pid: number;
  /** `nats://host:port` of the client listener. */
  readonly clientUrl: string;
  readonly ports: NatsServerPorts;
  readonly workDir: string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with its exit code and signal once the process has exited. */
  readonly exit: Promise<NatsServerExit>;
  /** Whether the process has exited (by now, not once it does: see `exit`). */
  hasExited(): boolean;
  stop(): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
}

export const INSTALL_HINT =
  "nats-server was not found: install it with `apt-get install -y nats-server` (Debian), " +
  "or put a nats-server 2.9+ binary on PATH, or set sink.embedded.binary";

/** Finds nats-server: the configured binary, else PATH, else Debian's /usr/sbin. */
export function findNatsServer(binary?: string): string {
  if (binary) return binary;
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"]) {
    if (dir && existsSync(join(dir, "nats-server"))) return join(dir, "nats-server");
  }
  throw new Error(INSTALL_HINT);
}

/**
 * Starts nats-server as a child that dies with this process, even on SIGKILL: it runs
 * under `setpriv --pdeathsig KILL` where util-linux has it. A server left behind by an
 * earlier crash (its pid file still names a live nats-server using our config) is
 * stopped first: the caller holds the work dir (a node, its data dir's lock), so such a
 * server's natsmon is gone. Resolves once the client port accepts connections.
 */
export async function startNatsServer(opts: {
  configText: string;
  workDir: string;
  binary?: string;
  readyTimeoutMs?: number;
  /** Variables added to this process's environment for the server (GOGC, GOMEMLIMIT…). */
  env?: Readonly<Record<string, string>>;
  /**
   * Each line the server logs, `ready` false until it listens: after start-up its stderr is
   * the only place it says what goes wrong (a disk full, JetStream disabled).
   */
  onLog?: (line: NatsServerLogLine, ready: boolean) => void;
  /**
   * Runs it in a process group of its own, so that a Ctrl-C at the terminal (SIGINT to the
   * whole foreground group) reaches only the caller, which stops the server itself: a server
   * the caller supervises must not exit by a signal meant for the caller.
   */
  ownProcessGroup?: boolean;
}): Promise<NatsServerProcess> {
  await mkdir(opts.workDir, { recursive: true });
  const confPath = join(opts.workDir, "nats-server.conf");
  await killOrphan(opts.workDir, confPath);
  await removePortsFiles(opts.workDir);
  await writeFile(confPath, opts.configText);
  const binary = findNatsServer(opts.binary);
  const withDeathSignal = existsSync("/usr/bin/setpriv");
  const spawnOptions: SpawnOptions = {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...opts.env },
    detached: opts.ownProcessGroup === true,
  };
  const child: ChildProcess = withDeathSignal
    ? spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", binary, "-c", confPath], spawnOptions)
    : spawn(binary, ["-c", confPath], spawnOptions);
  let stderr = "";
  let ready = false;
  const onLine = lineSplitter((line) => opts.onLog?.(parseNatsServerLogLine(line), ready));
  child.stderr?.on("data", (chunk: Buffer) => {
    // The tail is kept for an error at start-up; from then on the lines go to onLog only.
    if (!ready) stderr = (stderr + chunk.toString()).slice(-8192);
    onLine(chunk);
  });
  const exit = new Promise<NatsServerExit>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const exited = exit.then((e) => e.code);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  let ports: NatsServerPorts;
  try {
    ports = await waitForPorts(opts.workDir, pid, exited, opts.readyTimeoutMs ?? 15_000);
  } catch (err) {
    child.kill("SIGKILL");
    throw new Error(`nats-server did not start: ${(err as Error).message}\n${stderr.trim()}`, { cause: err });
  }
  const clientUrl = ports.nats?.[0];
  if (!clientUrl) throw new Error("nats-server wrote no client port");
  ready = true;
  stderr = "";
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    if (hasExited()) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return {
    pid,
    clientUrl,
    ports,
    workDir: opts.workDir,
    exited,
    exit,
    hasExited,
    stop,
    kill: (signal = "SIGKILL") => child.kill(signal),
    [Symbol.asyncDispose]: stop,
  };
}

async function waitForPorts(
  workDir: string,
  pid: number,
  exited: Promise<number | null>,
  timeoutMs: number,
): Promise<NatsServerPorts> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error("the process exited during start-up");
    // setpriv execs nats-server, so the child's pid is the server's pid.
    const file = join(workDir, `nats-server_${pid}.ports`);
    const ports = existsSync(file) ? await readPorts(file) : undefined;
    // nats-server writes the file once its listeners exist (PortsInfo waits for them), so a
    // connection from here on is accepted. No probe connection: the server would list it as
    // a client closed with a read error, which natsmon, watching its own sink, reports.
    if (ports?.nats?.[0]) return ports;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not ready after ${timeoutMs} ms`);
}

/**
 * The ports file, or undefined while nats-server is still writing it: the file appears
 * before its content, and a read in between gets an empty or cut JSON text.
 */
async function readPorts(file: string): Promise<NatsServerPorts | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as NatsServerPorts;
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

async function removePortsFiles(workDir: string): Promise<void> {
  for (const name of await readdir(workDir)) {
    if (name.endsWith(".ports")) await rm(join(workDir, name), { force: true });
  }
}

async function killOrphan(workDir: string, confPath: string): Promise<void> {
  const pidFile = join(workDir, "nats-server.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, "utf8")).trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ");
  } catch {
    return;
  }
  if (!cmdline.includes("nats-server") || !cmdline.includes(confPath)) return;
  process.kill(pid, "SIGKILL");
  const deadline = Date.now() + 5_000;
  while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}
