import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait-for.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
/** node's flags as `npm run natsmon` (and the installed binary's shebang) give them. */
const NODE_FLAGS = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    scripts: { natsmon: string };
  }
).scripts.natsmon
  .split(" ")
  .slice(1, -1);

/** The command line of `natsmon <args>` (node, its flags, main.ts), for a caller that spawns it its own way. */
export function natsmonArgv(args: readonly string[]): string[] {
  return [process.execPath, ...NODE_FLAGS, MAIN, ...args];
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface NatsmonProcess extends AsyncDisposable {
  readonly child: ChildProcess;
  stdout(): string;
  /** stdout as bytes (binary output such as `--format arrow`). */
  stdoutBytes(): Buffer;
  stderr(): string;
  /** The bus URL the node printed when it came up. */
  waitForUrl(timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

const SETPRIV = "/usr/bin/setpriv";

export interface SpawnNatsmonOptions {
  /**
   * Run so that file modes bind natsmon, as they bind a user: when the tests run as root,
   * without the capabilities that let root read any file (util-linux setpriv drops them
   * from the bounding set, so the root process it starts never has them).
   */
  honourFileModes?: boolean;
  /**
   * Run in a new pid namespace, as in another container on this host (util-linux unshare;
   * root only). natsmon is pid 1 there; `kill` signals it by its pid here, since unshare does
   * not pass signals on, and anything that kills unshare kills it with SIGKILL.
   */
  newPidNamespace?: boolean;
}

const UNSHARE = ["unshare", "--pid", "--mount-proc", "--kill-child"];

/**
 * Runs `natsmon <args>` as a separate process, exactly as a user would, node's flags
 * included. `stdin`, when given, is piped into the process and closed; otherwise stdin is
 * empty (not a terminal).
 */
export function spawnNatsmon(
  args: readonly string[],
  env: Record<string, string> = {},
  stdin?: string,
  options: SpawnNatsmonOptions = {},
): NatsmonProcess {
  const argv = [...NODE_FLAGS, MAIN, ...args];
  const [command, commandArgs]: [string, string[]] = options.newPidNamespace
    ? [UNSHARE[0]!, [...UNSHARE.slice(1), process.execPath, ...argv]]
    : options.honourFileModes && process.getuid?.() === 0
      ? [SETPRIV, ["--bounding-set", "-dac_override,-dac_read_search", "--", process.execPath, ...argv]]
      : [process.execPath, argv];
  const child = spawn(command, commandArgs, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  live.add(child);
  const outChunks: Buffer[] = [];
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => outChunks.push(chunk));
  const stdoutBytes = () => Buffer.concat(outChunks);
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? "unknown");
    }),
  );
  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) {
      const inner = options.newPidNamespace ? await childPid(child.pid!) : undefined;
      if (inner === undefined) child.kill(signal);
      else process.kill(inner, signal);
    }
    return exited;
  };
  return {
    child,
    stdout: () => stdoutBytes().toString(),
    stdoutBytes,
    stderr: () => err,
    exited,
    kill,
    waitForUrl: (timeoutMs = 30_000) =>
      waitFor(
        () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`natsmon exited early:\n${err.slice(-2000)}`);
          }
          return /listens at ((?:nats|tls):\/\/[\d.:]+\d)/.exec(stdoutBytes().toString())?.[1];
        },
        { timeoutMs, message: "natsmon to print its bus URL" },
      ),
    [Symbol.asyncDispose]: async () => {
      await kill("SIGTERM");
    },
  };
}

/** The (first) child of process `pid`, by its pid in this namespace, if it has one. */
async function childPid(pid: number): Promise<number | undefined> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  const first = Number(children.trim().split(" ")[0]);
  return first > 0 ? first : undefined;
}

/** Runs a natsmon client command to completion. */
export async function runNatsmon(
  args: readonly string[],
  env: Record<string, string> = {},
  stdin?: string,
  options: SpawnNatsmonOptions = {},
): Promise<{ code: number | string; stdout: string; stdoutBytes: Buffer; stderr: string }> {
  const p = spawnNatsmon(args, env, stdin, options);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stdoutBytes: p.stdoutBytes(), stderr: p.stderr() };
}

/**
 * Writes the YAML of a node on an embedded sink (OS-chosen port) that monitors one system
 * through its system account, and returns the file's path. `scraper` is the inline YAML map's
 * body, e.g. "interval: 1s".
 */
export async function writeMonitorConfig(options: {
  path: string;
  dataDir: string;
  system: string;
  url: string;
  user: { readonly user: string; readonly password: string };
  scraper: string;
  /** Application accounts whose services are discovered: name and a user of it. */
  accounts?: readonly { name: string; user: string; password: string }[];
}): Promise<string> {
  const { user } = options;
  await writeFile(
    options.path,
    [
      `node: {data-dir: ${JSON.stringify(options.dataDir)}}`,
      "sink: {embedded: {port: -1}}",
      "system:",
      `  id: ${options.system}`,
      ...(options.accounts?.length
        ? [
            "  nats:",
            `    url: ${JSON.stringify(options.url)}`,
            `    user: ${user.user}`,
            `    password: ${user.password}`,
            "    accounts:",
            ...options.accounts.map(
              (a) => `      - {name: ${a.name}, user: ${a.user}, password: ${a.password}}`,
            ),
          ]
        : [`  nats: {url: ${JSON.stringify(options.url)}, user: ${user.user}, password: ${user.password}}`]),
      `scraper: {${options.scraper}}`,
    ].join("\n"),
  );
  return options.path;
}

export interface TerminalProcess {
  /** What the terminal showed: stdout and stderr together, as a person would see them. */
  output(): string;
  /** Types on the terminal's keyboard ("\x03" is Ctrl-C, which the terminal turns into SIGINT). */
  type(text: string): void;
  /** Resolves with natsmon's exit code once it has exited. */
  readonly exited: Promise<number | string>;
}

/**
 * Runs `natsmon <args>` on a terminal of its own (a pseudo-terminal made by util-linux's
 * `script`), so stdin, stdout and stderr are all TTYs, as for a person at a prompt. The
 * keyboard stays open until the process exits: nothing sends an end of input unless typed.
 */
export function spawnNatsmonOnTerminal(args: readonly string[]): TerminalProcess {
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const command = `exec ${[process.execPath, ...NODE_FLAGS, MAIN, ...args].map(quote).join(" ")}`;
  // -e: script exits with the command's exit code; -q: no banner; /dev/null: no log file.
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? "unknown");
    }),
  );
  return {
    output: () => out,
    type: (text) => child.stdin.write(text),
    exited,
  };
}

/** The query example a node prints at start-up ("Try, in another terminal: …"), if it printed one yet. */
export function startupExample(node: Pick<NatsmonProcess, "stdout">): string | undefined {
  return node
    .stdout()
    .split("\n")
    .find((l) => l.startsWith("Try, in another terminal:"));
}

/**
 * `natsmon run` on its embedded bus with `dataDir`, serving GET /metrics on an OS-chosen
 * port, with `env` added (node.metrics-* settings); resolves with its metrics URL as it
 * prints it, once it serves.
 */
export async function spawnMetricsNode(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ node: NatsmonProcess; url: string }> {
  const node = spawnNatsmon(["run", "--data-dir", dataDir], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_NODE_METRICS_LISTEN: "127.0.0.1:0",
    ...env,
  });
  try {
    await node.waitForUrl();
    const url = /Its metrics, for Prometheus to scrape: (\S+)\n/.exec(node.stdout())?.[1];
    if (!url) throw new Error(`the node printed no metrics URL:\n${node.stdout()}`);
    return { node, url };
  } catch (err) {
    await node[Symbol.asyncDispose]();
    throw err;
  }
}
