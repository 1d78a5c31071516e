/**
 * When the terminal or the reader goes away: a backup whose output pipe is closed early
 * (`2>&1 | head -1`, `| true`) still completes and leaves no temporary file, and a node
 * started in a terminal that closes (SIGHUP, often twice) stops as cleanly as on Ctrl-C.
 * A backup interrupted by SIGHUP is in backup-failures.test.ts, with SIGINT and SIGTERM.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { natsmonArgv } from "../harness/natsmon-process.ts";
import type { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { backupArgs, rowCounts, startLabNode, type LabNode } from "./backup-fixture.ts";

/**
 * Runs `natsmon <args>` through bash as `natsmon <args> <redirect> | <reader>`, and resolves
 * with natsmon's own exit code (not the reader's) and what bash itself left on stderr.
 */
async function piped(
  args: readonly string[],
  redirect: string,
  reader: string,
): Promise<{ code: number; stderr: string }> {
  const child = spawn(
    "bash",
    ["-c", `"$@" ${redirect} | ${reader}; exit "\${PIPESTATUS[0]}"`, "bash", ...natsmonArgv(args)],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code: code ?? -1, stderr };
}

describe("natsmon backup and natsmon run when the terminal or the reader goes away", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;

  let lab: LabNode | undefined;
  before(async () => {
    lab = await startLabNode("natsmon-hangup-", { epochs: 5 });
    ({ dir, url } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  const files = async (part: string) => (await readdir(dir.path)).filter((n) => n.includes(part));

  test("a backup whose reader closes the pipe after the first line (2>&1 | head -1) completes and leaves no temporary file", async () => {
    const out = join(dir.path, "head.duckdb");
    const run = await piped(backupArgs(url, "--out", out), "2>&1", "head -1 >/dev/null");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.deepEqual(await files("head"), ["head.duckdb"]);
    const counts = await rowCounts(out);
    assert.ok((counts.get("hx.server_stats") ?? 0) > 0, "the backup holds the node's rows");
  });

  test("a backup whose stdout is closed before its summary (| true) completes, the summary dropped", async () => {
    const out = join(dir.path, "true.duckdb");
    const run = await piped(backupArgs(url, "--out", out), "", "true");
    assert.equal(run.code, 0, run.stderr);
    // stderr stayed open: the progress is all there, and no error.
    assert.match(run.stderr, /^finishing: /m);
    assert.doesNotMatch(run.stderr, /natsmon: |EPIPE/);
    assert.deepEqual(await files("true"), ["true.duckdb"]);
  });

  test("a node sent SIGHUP twice, as a closing terminal does, stops cleanly and exits 0", async () => {
    const node = lab!.node;
    const natsServer = Number(await readFile(join(dir.path, "data", "nats", "nats-server.pid"), "utf8"));
    await lab!.nc.close();
    node.child.kill("SIGHUP");
    node.child.kill("SIGHUP");
    assert.equal(await node.exited, 0, node.stderr().slice(-2000));
    assert.match(node.stderr(), /"signal":"SIGHUP".*"msg":"stopping"/);
    assert.match(node.stderr(), /"msg":"node stopped"/);
    await waitFor(
      () => {
        try {
          process.kill(natsServer, 0);
          return false;
        } catch {
          return true;
        }
      },
      { message: "the embedded nats-server to exit" },
    );
  });
});
