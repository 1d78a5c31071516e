/**
 * natsmon supervises its embedded nats-server: one that exits while natsmon did not ask it to
 * (killed from outside) is named in an error and started again on the same port, and the node
 * goes on; starts that fail are tried again, and after ten in a row the node exits 1. Its own
 * stops (SIGTERM, a Ctrl-C to the terminal's whole process group) restart nothing. The restart
 * natsmon makes itself after a full disk is in disk-full.test.ts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { findNatsServer } from "../../src/bus/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { natsmonArgv, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

interface LogLine {
  readonly level: number;
  readonly msg?: string;
}

const logLines = (stderr: string) => jsonLogLines<LogLine>(stderr);

/**
 * The supervisor's own line for an exit. Not any text with those words: the quiet-catalog
 * warning names the restart's cause too ("natsmon restarted its nats-server: it exited
 * unexpectedly …"), and comes when the epoch the kill cut off took scraper.timeout to end.
 */
const UNEXPECTED = /the embedded nats-server \(pid \d+\) exited unexpectedly/;

/** The pids of the nats-server processes running this data dir's configuration. */
async function natsServers(natsDir: string): Promise<number[]> {
  const conf = join(natsDir, "nats-server.conf");
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes("nats-server") && cmdline.includes(conf)) pids.push(Number(name));
  }
  return pids;
}

/** The pid of the one nats-server running this data dir's configuration, once there is one. */
async function runningServer(natsDir: string, not?: number): Promise<number> {
  return waitFor(
    async () => {
      const pids = (await natsServers(natsDir)).filter((p) => p !== not);
      return pids.length === 1 ? pids[0] : undefined;
    },
    { message: "a nats-server running the node's configuration", timeoutMs: 30_000 },
  );
}

/** The client URL in a nats-server's ports file, once it has written it. */
async function clientUrlOf(natsDir: string, pid: number): Promise<string> {
  return waitFor(
    async () => {
      const text = await readFile(join(natsDir, `nats-server_${pid}.ports`), "utf8").catch(() => "");
      return text ? (JSON.parse(text) as { nats: string[] }).nats[0] : undefined;
    },
    { message: `nats-server ${pid}'s ports file` },
  );
}

async function stoppedCleanly(node: NatsmonProcess, natsDir: string): Promise<void> {
  assert.equal(await node.kill("SIGTERM"), 0, node.stderr().slice(-3000));
  assert.match(node.stderr(), /"msg":"node stopped"/);
  assert.deepEqual(await natsServers(natsDir), [], "no nats-server left running");
}

test("a node whose embedded nats-server is killed names the exit, starts it again on the same port and goes on", async () => {
  await using dir = await tempDir();
  const natsDir = join(dir.path, "data", "nats");
  const { node, nc } = await spawnLocalNode(dir.path);
  try {
    const url = await node.waitForUrl();
    await waitFor(() => logLines(node.stderr()).some((l) => l.msg === "epoch folded"), {
      message: "a first epoch folded",
      timeoutMs: 30_000,
    });
    const first = await runningServer(natsDir);
    process.kill(first, "SIGKILL");

    const exit = await waitFor(
      () => {
        const i = logLines(node.stderr()).findIndex((l) => UNEXPECTED.test(l.msg ?? ""));
        return i >= 0 ? i : undefined;
      },
      { message: "the exit logged", timeoutMs: 30_000 },
    );
    const exitLine = logLines(node.stderr())[exit]!;
    assert.equal(exitLine.level, 50, "an error");
    assert.match(
      exitLine.msg!,
      new RegExp(
        `\\(pid ${first}\\) exited unexpectedly \\(killed by SIGKILL\\); natsmon restarts it on the same port`,
      ),
    );

    const second = await runningServer(natsDir, first);
    assert.equal(await clientUrlOf(natsDir, second), url, "the new server listens on the same port");
    await waitFor(
      () =>
        logLines(node.stderr())
          .slice(exit)
          .some((l) => l.msg === "epoch folded"),
      {
        message: "an epoch folded after the restart",
        timeoutMs: 60_000,
      },
    );
    assert.deepEqual(
      logLines(node.stderr())
        .slice(exit)
        .filter((l) => /election|disk filled up|stuck/.test(l.msg ?? "")),
      [],
      "nothing logged after the exit blames an election or a full disk",
    );
    const epochs = await waitFor(
      () =>
        sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.epochs").catch(() => undefined),
      { message: "db.query answering" },
    );
    assert.ok(epochs[0]!.n >= 2, "db.query answers with the epochs folded before and after");

    await nc.close();
    await stoppedCleanly(node, natsDir);
    assert.equal(
      logLines(node.stderr()).filter((l) => UNEXPECTED.test(l.msg ?? "")).length,
      1,
      "the stop itself is no unexpected exit",
    );
  } finally {
    await nc.close();
    await node.kill("SIGKILL");
  }
});

test("a node stopped by SIGTERM, or by a Ctrl-C to its whole process group, restarts no nats-server", async () => {
  await using dir = await tempDir();
  const natsDir = join(dir.path, "data", "nats");
  const { node, nc } = await spawnLocalNode(dir.path);
  await nc.close();
  await runningServer(natsDir);
  await stoppedCleanly(node, natsDir);
  assert.doesNotMatch(node.stderr(), UNEXPECTED);

  // A terminal's Ctrl-C goes to every process of its foreground group: run as a group leader.
  const child = spawn(
    process.execPath,
    natsmonArgv(["run", "--config", join(dir.path, "natsmon.yaml")]).slice(1),
    {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  try {
    await waitFor(() => /listens at nats:/.test(stdout), { message: "the node up", timeoutMs: 30_000 });
    await runningServer(natsDir);
    process.kill(-child.pid!, "SIGINT");
    assert.equal(await exited, 0, stderr.slice(-3000));
    assert.match(stderr, /"msg":"node stopped"/);
    assert.doesNotMatch(stderr, UNEXPECTED);
    assert.deepEqual(await natsServers(natsDir), [], "no nats-server left running");
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
  }
});

test("starts that fail are logged with their cause and tried again; after ten in a row the node exits 1", async () => {
  await using dir = await tempDir();
  const natsDir = join(dir.path, "data", "nats");
  // A nats-server that will not start while the file `refuse` exists, as after a broken upgrade.
  const refuse = join(dir.path, "refuse");
  const binary = join(dir.path, "nats-server-wrapper");
  await writeFile(
    binary,
    [
      "#!/bin/sh",
      `if [ -e '${refuse}' ]; then echo 'nats-server-wrapper: refusing to start' >&2; exit 3; fi`,
      `exec '${findNatsServer()}' "$@"`,
      "",
    ].join("\n"),
  );
  await chmod(binary, 0o755);
  const { node, nc } = await spawnLocalNode(dir.path, [], {
    NATSMON_SINK_EMBEDDED_BINARY: binary,
    NATSMON_SINK_RESTART_DELAYS_MS: "200,400",
  });
  await nc.close();
  const failures = () => logLines(node.stderr()).filter((l) => /did not start again/.test(l.msg ?? ""));
  try {
    const url = await node.waitForUrl();
    const first = await runningServer(natsDir);
    await writeFile(refuse, "");
    process.kill(first, "SIGKILL");
    await waitFor(() => failures().length >= 2, { message: "two failed starts", timeoutMs: 30_000 });
    for (const failure of failures()) {
      assert.equal(failure.level, 50);
      assert.match(failure.msg!, /refusing to start/, "names the cause");
      assert.match(failure.msg!, /natsmon tries again in 0\.[24] s/);
    }
    await rm(refuse);
    const second = await runningServer(natsDir, first);
    assert.equal(await clientUrlOf(natsDir, second), url);
    await waitFor(() => /the embedded nats-server runs again/.test(node.stderr()), {
      message: "running again",
    });

    await writeFile(refuse, "");
    process.kill(second, "SIGKILL");
    assert.equal(await node.exited, 1, node.stderr().slice(-3000));
    const fatal = logLines(node.stderr()).find((l) => l.level === 60);
    assert.match(fatal?.msg ?? "", /did not start again 10 times in a row .*natsmon exits with code 1/s);
    assert.deepEqual(await natsServers(natsDir), [], "no nats-server left running");
  } finally {
    await node.kill("SIGKILL");
  }
});
