import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait-for.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface NatsmonProcess extends AsyncDisposable {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The bus URL the node printed when it came up. */
  waitForUrl(timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Runs `natsmon <args>` as a separate process, exactly as a user would. */
export function spawnNatsmon(args: readonly string[], env: Record<string, string> = {}): NatsmonProcess {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? "unknown");
    }),
  );
  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill,
    waitForUrl: (timeoutMs = 30_000) =>
      waitFor(
        () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`natsmon exited early:\n${err.slice(-2000)}`);
          }
          return /listens at (nats:\/\/[\d.:]+)/.exec(out)?.[1];
        },
        { timeoutMs, message: "natsmon to print its bus URL" },
      ),
    [Symbol.asyncDispose]: async () => {
      await kill("SIGTERM");
    },
  };
}

/** Runs a natsmon client command to completion. */
export async function runNatsmon(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const p = spawnNatsmon(args, env);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}
