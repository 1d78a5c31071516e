import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import {
  DATA_DIR_LOCK_FILE,
  DataDirInUseError,
  describeProcess,
  lockDataDir,
  type DataDirOwner,
} from "../../../src/node/data-dir-lock.ts";
import { pino } from "pino";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";

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
    // Last refreshed before the reboot, as such a lock is.
    const beforeReboot = new Date(Date.now() - 3_600_000);
    await utimes(lockPath(tmp.path), beforeReboot, beforeReboot);
    await using _lock = await lockDataDir(tmp.path);
    assert.equal((await holder(tmp.path)).pid, process.pid);
  });

  test("takes over at once an older natsmon's lock from another boot, which names no pid namespace", async () => {
    await using tmp = await tempDir();
    await using other = startSleeper();
    const { ns: _, ...owner } = await describeProcess(other.pid!);
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

/** The lock's heartbeat, short so that a test need not wait long for a stale lock. */
const TIMING = { heartbeatMs: 200, staleAfterMs: 3_000 };
const LOCK_MODULE = new URL("../../../src/node/data-dir-lock.ts", import.meta.url).href;
/** Locks the data dir argv[2] with argv[3]'s timing, prints the lock's owner, and runs on. */
const HOLDER = `
  const { lockDataDir } = await import(process.argv[1]);
  const lock = await lockDataDir(process.argv[2], undefined, JSON.parse(process.argv[3]));
  process.stdout.write(JSON.stringify(lock.owner) + "\\n");
  const keep = setInterval(() => {}, 60_000);
  const reason = await lock.lost;
  await lock[Symbol.asyncDispose]();
  process.stdout.write("lost: " + reason + "\\n");
  clearInterval(keep);
`;

/**
 * A real process holding `dir`'s lock in a new pid namespace, as a node in another container
 * on this host does (unshare(1) of util-linux; root only, as the tests run). Killed on dispose.
 */
async function holderInNewPidNamespace(dir: string) {
  const args = ["--input-type=module", "-e", HOLDER, LOCK_MODULE, dir, JSON.stringify(TIMING)];
  const child = spawn("unshare", ["--pid", "--mount-proc", "--kill-child", process.execPath, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, "exit");
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // The node in the namespace, by its pid here: unshare's --kill-child takes it along.
    const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").catch(() => "");
    const inner = children.trim().split(" ").filter(Boolean).map(Number);
    child.kill("SIGKILL");
    await exited;
    for (const pid of inner) {
      await waitFor(() => !existsSync(`/proc/${pid}`), { message: "the holder in the namespace to die" });
    }
  };
  try {
    const owner = await waitFor(() => (out.endsWith("\n") ? (JSON.parse(out) as DataDirOwner) : undefined), {
      message: "the holder in a new pid namespace to lock the data dir",
    });
    /** Sends the node in the namespace a signal (SIGSTOP, SIGCONT), by its pid here. */
    const signal = async (sig: NodeJS.Signals) => {
      const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8");
      for (const pid of children.trim().split(" ").filter(Boolean).map(Number)) process.kill(pid, sig);
    };
    return { owner, kill, signal, output: () => out, [Symbol.asyncDispose]: kill };
  } catch (e) {
    await kill();
    throw new Error(`${(e as Error).message}; its stderr: ${err}`, { cause: e });
  }
}

describe("lockDataDir against a node in another pid namespace (another container on this host)", () => {
  test("is refused while that node runs, naming its pid, namespace and the lock's age, and takes the lock over once it died and its lock went stale", async () => {
    await using tmp = await tempDir();
    await using other = await holderInNewPidNamespace(tmp.path);
    const ours = await describeProcess(process.pid);
    assert.ok(ours.ns && other.owner.ns, "both pid namespaces were read");
    assert.notEqual(other.owner.ns, ours.ns);
    assert.equal(other.owner.boot, ours.boot, "one host, one boot");
    const lockText = await readFile(lockPath(tmp.path), "utf8");

    await assert.rejects(lockDataDir(tmp.path, undefined, TIMING), (err: unknown) => {
      assert.ok(err instanceof DataDirInUseError);
      assert.equal(err.ownerPid, other.owner.pid);
      assert.equal(err.foreign?.ns, other.owner.ns);
      assert.match(
        err.message,
        new RegExp(
          `^another natsmon node \\(pid ${other.owner.pid} in another container \\(pid namespace ` +
            `pid:\\[\\d+\\]\\)\\) is running on data dir ${tmp.path}: its lock was refreshed [\\d.]+ s ago; ` +
            "stop that node where it runs \\(its pid means nothing here\\), or give this node another " +
            "node.data-dir \\(--data-dir, NATSMON_NODE_DATA_DIR\\). A lock no longer refreshed \\(its node " +
            "crashed\\) is taken over 3 s after its last refresh$",
        ),
      );
      return true;
    });
    assert.equal(await readFile(lockPath(tmp.path), "utf8"), lockText, "its lock is left alone");
    assert.deepEqual(await readdir(tmp.path), [DATA_DIR_LOCK_FILE]);

    await other.kill();
    const { log, lines } = recordingLogger();
    {
      await using lock = await lockDataDir(tmp.path, log, TIMING);
      assert.deepEqual(await holder(tmp.path), lock.owner);
      assert.equal(lock.owner.pid, process.pid);
      assert.match(
        lines.map((l) => l.msg).join("\n"),
        /took over the data dir from a node whose pid cannot be checked here \(another container or host\) and whose lock went unrefreshed for \d+ s/,
      );
    }
    assert.deepEqual(await readdir(tmp.path), []);
  });

  test("a node frozen past the lock's staleness loses it to another, and once it goes on says so and leaves the new lock alone", async () => {
    await using tmp = await tempDir();
    await using other = await holderInNewPidNamespace(tmp.path);
    await other.signal("SIGSTOP");
    await using lock = await lockDataDir(tmp.path, undefined, TIMING);
    await other.signal("SIGCONT");
    const said = await waitFor(() => /^lost: (.*)$/m.exec(other.output())?.[1], {
      message: "the resumed holder noticing that its lock was taken over",
    });
    assert.ok(
      said.startsWith(
        `the data dir lock ${lockPath(tmp.path)} is another node's now ({"pid":${process.pid},`,
      ),
      said,
    );
    assert.match(
      said,
      /it took the data dir over while this node went unrefreshed for longer than the lock allows/,
    );
    // It disposed of its lock, which removed nothing: the file there is the new holder's.
    assert.deepEqual(await holder(tmp.path), lock.owner);
  });

  test("a node refreshes its lock's mtime while it holds it, and removes the lock on dispose", async () => {
    await using tmp = await tempDir();
    const lock = await lockDataDir(tmp.path, undefined, TIMING);
    const first = (await stat(lockPath(tmp.path))).mtimeMs;
    await waitFor(async () => (await stat(lockPath(tmp.path))).mtimeMs !== first, { message: "a refresh" });
    await lock[Symbol.asyncDispose]();
    assert.equal(existsSync(lockPath(tmp.path)), false);
  });

  test("refuses a lock from another host (another boot) while it is refreshed, and takes it over once it is not", async () => {
    await using tmp = await tempDir();
    const ours = await describeProcess(process.pid);
    const remote = { pid: ours.pid, started: ours.started, boot: "another-hosts-boot", ns: ours.ns };
    await writeFile(lockPath(tmp.path), JSON.stringify(remote) + "\n");
    // Its node's heartbeat, as the other host's node would refresh it over the shared filesystem.
    const beat = setInterval(() => {
      const now = new Date();
      utimes(lockPath(tmp.path), now, now).catch(() => undefined);
    }, TIMING.heartbeatMs);
    try {
      await assert.rejects(lockDataDir(tmp.path, undefined, TIMING), (err: unknown) => {
        assert.ok(err instanceof DataDirInUseError);
        assert.equal(err.foreign?.boot, "another-hosts-boot");
        assert.match(
          err.message,
          /^another natsmon node \(pid \d+ on another host \(boot id another-hosts-boot\)\)/,
        );
        return true;
      });
    } finally {
      clearInterval(beat);
    }
    await using lock = await lockDataDir(tmp.path, undefined, TIMING);
    assert.deepEqual(await holder(tmp.path), lock.owner);
  });
});
