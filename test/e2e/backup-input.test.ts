import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { NatsConnection } from "@nats-io/nats-core";
import { readArrowStream } from "../../src/cli/index.ts";
import { systemSubjects } from "../../src/protocol/index.ts";
import { natsmonArgv, runNatsmon } from "../harness/natsmon-process.ts";
import type { tempDir } from "../harness/temp-dir.ts";
import { backupArgs, epochAt, startLabNode, SYSTEM, type LabNode } from "./backup-fixture.ts";

/** The epochs hx.epochs holds in a backup file, in RFC 3339 with microseconds. */
async function backedUpEpochs(path: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
  try {
    const con = await instance.connect();
    await con.run("SET TimeZone = 'UTC'");
    const rows = (
      await con.runAndReadAll("SELECT strftime(epoch, '%Y-%m-%dT%H:%M:%S.%fZ') FROM hx.epochs ORDER BY 1")
    ).getRowsJS() as [string][];
    con.closeSync();
    return rows.map(([epoch]) => epoch);
  } finally {
    instance.closeSync();
  }
}

/** An epoch as the backup's hx.epochs renders it: six fraction digits. */
const micros = (epoch: string) => epoch.replace(/\.(\d{3})Z$/, ".$1000Z");

describe("natsmon backup: what it makes of its input, on a catalog of 50 epochs", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let url: string;
  let nc: NatsConnection;

  const backup = (...args: string[]) => runNatsmon(backupArgs(url, ...args));
  /** Rows of hx.epochs that db.backup.stream sends for the window given. */
  const epochRows = async (start_epoch: string, end_epoch: string): Promise<number> => {
    const stream = await readArrowStream(
      nc,
      systemSubjects(SYSTEM).dbBackupStream,
      { schema: "hx", table: "epochs", start_epoch, end_epoch },
      { timeoutMs: 30_000 },
    );
    let rows = 0;
    for await (const batch of stream) rows += batch.numRows;
    return rows;
  };
  const files = async (part: string) => (await readdir(dir.path)).filter((n) => n.includes(part));

  let lab: LabNode | undefined;
  before(async () => {
    lab = await startLabNode("natsmon-backup-input-");
    ({ dir, url, nc } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a temporary file a killed run with the same pid left behind neither fails the backup nor is touched", async () => {
    const out = join(dir.path, "pid.duckdb");
    const stale = join(dir.path, "stale-content");
    await writeFile(stale, "what a run killed by the OOM killer left");
    // `exec` keeps the shell's pid, so natsmon runs with the pid the stale file is named after,
    // as PID 1 does in every container restart.
    const argv = natsmonArgv(backupArgs(url, "--out", out, "--since", epochAt(48)));
    const child = spawn(
      "bash",
      ["-c", 'cp "$0" "$1.$$.partial" && shift && exec "$@"', stale, join(dir.path, ".pid.duckdb"), ...argv],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, stderr);
    const left = await files(".pid.duckdb.");
    assert.equal(left.length, 1, left.join());
    assert.match(left[0]!, new RegExp(`^\\.pid\\.duckdb\\.${child.pid}\\.partial$`));
    assert.deepEqual(await backedUpEpochs(out), [epochAt(48), epochAt(49)].map(micros));
  });

  test("an empty --out, a directory (even with --force) or a missing directory is refused before anything is asked", async () => {
    const folder = join(dir.path, "a-folder");
    await mkdir(folder);
    const cases: [string[], RegExp][] = [
      [["--out", ""], /--out needs a file name, e\.g\. --out backup\.duckdb/],
      [["--out", "  "], /--out needs a file name/],
      [
        ["--out", folder, "--force"],
        /a-folder is a directory; name the file to write, e\.g\. --out .*a-folder\/backup\.duckdb/,
      ],
      [["--out", folder], /a-folder is a directory/],
      [
        ["--out", join(dir.path, "nowhere", "b.duckdb")],
        /the directory .*nowhere does not exist; create it first/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await backup(...args);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, message);
      // Refused before planning: nothing was asked, so nothing was announced.
      assert.doesNotMatch(run.stderr, /backing up system/);
    }
    assert.deepEqual(await readdir(folder), []);
  });

  test("lower-case t and z, valid RFC 3339, are taken by natsmon backup and by db.backup.stream", async () => {
    const out = join(dir.path, "lower.duckdb");
    const run = await backup(
      "--out",
      out,
      "--since",
      "2026-11-22t10:45:00z",
      "--until",
      "2026-11-22T10:46:00z",
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await backedUpEpochs(out), [micros(epochAt(45)), micros(epochAt(46))]);

    assert.equal(await epochRows("2026-11-22t10:47:00z", "2026-11-22t10:48:00Z"), 2);
  });

  test("db.backup.stream refuses a bound DuckDB cannot cast with a 400 naming the field and the range, and takes any number of fraction digits", async () => {
    const subject = systemSubjects(SYSTEM).dbBackupStream;
    const cases: [Record<string, string>, RegExp][] = [
      [
        { end_epoch: "9999-12-31T23:59:59-05:00" },
        /^end_epoch 9999-12-31T23:59:59-05:00 is outside the supported range, 0000-01-01T00:00:00Z to 9999-12-31T23:59:59\.999999Z in UTC$/,
      ],
      [{ start_epoch: "0000-01-01T00:00:00+00:01" }, /^start_epoch .* is outside the supported range/],
    ];
    for (const [bounds, description] of cases) {
      const reply = await nc.request(subject, JSON.stringify({ schema: "hx", table: "epochs", ...bounds }), {
        timeout: 10_000,
      });
      assert.equal(reply.headers?.get("Nats-Service-Error-Code"), "400", JSON.stringify(bounds));
      assert.match(reply.json<{ description: string }>().description, description);
    }
    assert.equal(await epochRows("2026-11-22T10:45:00.0000000000Z", "2026-11-22T10:46:00.9999999999Z"), 2);

    const run = await backup("--out", join(dir.path, "y10k.duckdb"), "--until", "9999-12-31T23:59:59-05:00");
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--until 9999-12-31T23:59:59-05:00 is outside the supported range/);
    assert.deepEqual(await files("y10k"), []);
  });

  test("a --since a fraction of a millisecond after --until is refused before asking, and a start is never widened", async () => {
    for (const [since, until] of [
      ["2026-11-22T10:45:00.0000001Z", "2026-11-22T10:45:00Z"],
      ["2026-11-22T10:45:00.0004Z", "2026-11-22T10:45:00.0001Z"],
    ]) {
      const run = await backup(
        "--out",
        join(dir.path, "sub-ms.duckdb"),
        "--since",
        since!,
        "--until",
        until!,
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /--since \(.*\) is after --until/);
      assert.doesNotMatch(run.stderr, /backing up system/);
    }
    assert.deepEqual(await files("sub-ms"), []);

    // Epoch 45 is at 10:45:00.000000, just before the start: cutting the start's digits
    // used to let it in.
    const since = "2026-11-22T10:45:00.0000001Z";
    const out = join(dir.path, "after-start.duckdb");
    const run = await backup("--out", out, "--since", since, "--until", epochAt(46));
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await backedUpEpochs(out), [micros(epochAt(46))]);
    const stream = await readArrowStream(
      nc,
      systemSubjects(SYSTEM).dbBackupStream,
      { schema: "hx", table: "epochs", start_epoch: since, end_epoch: epochAt(46) },
      { timeoutMs: 30_000 },
    );
    let rows = 0;
    for await (const batch of stream) rows += batch.numRows;
    assert.equal(rows, 1);
  });
});
