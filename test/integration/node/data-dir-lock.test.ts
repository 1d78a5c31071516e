import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  DATA_DIR_LOCK_FILE,
  DataDirInUseError,
  describeProcess,
  lockDataDir,
  type DataDirOwner,
} from "../../../src/node/data-dir-lock.ts";
import { pino } from "pino";
import { tempDir } from "../../harness/temp-dir.ts";

/** A real process that runs until disposed. */
function startSleeper(): ChildProcess & AsyncDisposable {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  return Object.assign(child, {
    [Symbol.asyncDispose]: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  });
}

/** The description of a process that has run and exited (and been collected). */
async function goneProcess(): Promise<DataDirOwner> {
  await using child = startSleeper();
  const owner = await describeProcess(child.pid!);
  assert.ok(owner.started, "the process's start time was read");
  return owner;
}

/**
 * A small tmpfs on a temporary directory, made read-only by `readOnly()` (root only, as the
 * tests run: a read-only mount binds root, where file modes do not).
 */
async function smallDisk(): Promise<{ path: string; readOnly(): void } & AsyncDisposable> {
  const dir = await tempDir("natsmon-lock-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir.path]);
  } catch (err) {
    await dir[Symbol.asyncDispose]();
    throw new Error(`this test mounts a tmpfs and needs root: ${(err as Error).message}`, { cause: err });
  }
  return {
    path: dir.path,
    readOnly: () => execFileSync("mount", ["-o", "remount,ro", dir.path]),
    async [Symbol.asyncDispose]() {
      execFileSync("umount", ["-l", dir.path]);
      await dir[Symbol.asyncDispose]();
    },
  };
}

function recordingLogger(): { log: pino.Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as never) });
  return { log, lines };
}

const lockPath = (dir: string) => join(dir, DATA_DIR_LOCK_FILE);

async function holder(dir: string): Promise<DataDirOwner> {
  return JSON.parse(await readFile(lockPath(dir), "utf8")) as DataDirOwner;
}

describe("lockDataDir", () => {
  test("creates the data dir, holds it for this process, and frees it on dispose", async () => {
    await using tmp = await tempDir();
    const dir = join(tmp.path, "data");
    {
      await using lock = await lockDataDir(dir);
      assert.equal(lock.path, lockPath(dir));
      assert.deepEqual(await holder(dir), await describeProcess(process.pid));
    }
    assert.equal(existsSync(lockPath(dir)), false);
    // Nothing else of the lock's is left in the data dir.
    assert.deepEqual(await readdir(dir), []);
  });

  test("refuses a data dir a live process holds, naming its pid, and leaves its lock alone", async () => {
    await using tmp = await tempDir();
    await using other = startSleeper();
    const owner = await describeProcess(other.pid!);
    await writeFile(lockPath(tmp.path), JSON.stringify(owner));
    await assert.rejects(lockDataDir(tmp.path), (err: unknown) => {
      assert.ok(err instanceof DataDirInUseError);
      assert.equal(err.ownerPid, other.pid);
      assert.equal(
        err.message,
        `another natsmon node (pid ${other.pid}) is running on data dir ${tmp.path}; ` +
          "stop it, or give this node another node.data-dir (--data-dir, NATSMON_NODE_DATA_DIR)",
      );
      return true;
    });
    assert.deepEqual(await holder(tmp.path), owner);
    assert.deepEqual((await readdir(tmp.path)).sort(), [DATA_DIR_LOCK_FILE]);
  });

  test("refuses a second lock in the same process", async () => {
    await using tmp = await tempDir();
    await using _first = await lockDataDir(tmp.path);
    await assert.rejects(lockDataDir(tmp.path), DataDirInUseError);
  });

  test("takes over the lock of a process that is gone, as a node killed with SIGKILL leaves it", async () => {
    await using tmp = await tempDir();
    await writeFile(lockPath(tmp.path), JSON.stringify(await goneProcess()));
    await using _lock = await lockDataDir(tmp.path);
    assert.equal((await holder(tmp.path)).pid, process.pid);
  });

  test("takes over a lock whose pid now belongs to another process, told apart by its start time", async () => {
    await using tmp = await tempDir();
    await using other = startSleeper();
    const owner = await describeProcess(other.pid!);
    await writeFile(
      lockPath(tmp.path),
      JSON.stringify({ ...owner, started: `${Number(owner.started) - 1}` }),
    );
    await using _lock = await lockDataDir(tmp.path);
    assert.equal((await holder(tmp.path)).pid, process.pid);
  });

  test("takes over a lock written before the machine rebooted", async () => {
    await using tmp = await tempDir();
    await using other = startSleeper();
    const owner = await describeProcess(other.pid!);
    assert.ok(owner.boot, "the boot id was read");
    await writeFile(lockPath(tmp.path), JSON.stringify({ ...owner, boot: "an-earlier-boot" }));
    await using _lock = await lockDataDir(tmp.path);
    assert.equal((await holder(tmp.path)).pid, process.pid);
  });

  test("takes over a lock file that is not one (empty)", async () => {
    await using tmp = await tempDir();
    await writeFile(lockPath(tmp.path), "");
    await using _lock = await lockDataDir(tmp.path);
    assert.equal((await holder(tmp.path)).pid, process.pid);
  });

  test("takes over from a node that died while it took over a stale lock", async () => {
    await using tmp = await tempDir();
    await writeFile(lockPath(tmp.path), JSON.stringify(await goneProcess()));
    await writeFile(`${lockPath(tmp.path)}.takeover`, JSON.stringify(await goneProcess()));
    {
      await using _lock = await lockDataDir(tmp.path);
      assert.equal((await holder(tmp.path)).pid, process.pid);
    }
    assert.deepEqual(await readdir(tmp.path), []);
  });

  test("of several takers of a stale lock at once, exactly one gets it", async () => {
    await using tmp = await tempDir();
    await writeFile(lockPath(tmp.path), JSON.stringify(await goneProcess()));
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockDataDir(tmp.path)));
    const taken = results.filter((r) => r.status === "fulfilled");
    try {
      assert.equal(taken.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.ok(r.reason instanceof DataDirInUseError, String(r.reason));
      }
      assert.equal((await holder(tmp.path)).pid, process.pid);
    } finally {
      for (const r of taken) await r.value[Symbol.asyncDispose]();
    }
    assert.deepEqual(await readdir(tmp.path), []);
  });

  test("on a data dir it cannot write, lets the node start with a warning, as before locks", async () => {
    await using disk = await smallDisk();
    const dir = join(disk.path, "data");
    await mkdir(dir);
    disk.readOnly();
    const { log, lines } = recordingLogger();
    await using lock = await lockDataDir(dir, log);
    assert.equal(lock.owner.pid, process.pid);
    assert.equal(existsSync(lockPath(dir)), false);
    const warning = lines.find((l) => l.level === pino.levels.values.warn);
    assert.equal(
      warning?.msg,
      `cannot write the lock of data dir ${dir}: nothing keeps another node from using it too`,
    );
  });

  test("on a data dir it cannot write, still refuses while a live node's lock is there", async () => {
    await using disk = await smallDisk();
    await using other = startSleeper();
    await writeFile(lockPath(disk.path), JSON.stringify(await describeProcess(other.pid!)));
    disk.readOnly();
    await assert.rejects(lockDataDir(disk.path), (err: unknown) => {
      assert.ok(err instanceof DataDirInUseError);
      assert.equal(err.ownerPid, other.pid);
      return true;
    });
  });
});
