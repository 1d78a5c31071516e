import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "../lib/index.ts";

/** The lock file, in the data dir itself: a data dir reached by another path has the same one. */
export const DATA_DIR_LOCK_FILE = "natsmon.lock";

/** Who holds a data dir: enough to tell whether that process still runs. */
export interface DataDirOwner {
  pid: number;
  /** Its start time (/proc/<pid>/stat's starttime, clock ticks since boot): a reused pid has another. */
  started?: string;
  /** The kernel's boot id: after a reboot a pid and a start time can recur. */
  boot?: string;
}

export interface DataDirLock extends AsyncDisposable {
  readonly path: string;
  readonly owner: DataDirOwner;
}

/** Another live natsmon process holds the data dir. */
export class DataDirInUseError extends Error {
  readonly dataDir: string;
  readonly ownerPid: number;

  constructor(dataDir: string, ownerPid: number) {
    super(
      `another natsmon node (pid ${ownerPid}) is running on data dir ${dataDir}; ` +
        "stop it, or give this node another node.data-dir (--data-dir, NATSMON_NODE_DATA_DIR)",
    );
    this.name = "DataDirInUseError";
    this.dataDir = dataDir;
    this.ownerPid = ownerPid;
  }
}

/**
 * Takes the data dir for this process, for as long as it runs or until the lock is disposed:
 * two nodes on one data dir would share its DuckDB files and its embedded nats-server (the
 * second would take the first's server for a crashed node's orphan and kill it). Throws
 * DataDirInUseError while another live process holds it. A lock left by a process that is
 * gone (a node killed with SIGKILL) is taken over.
 *
 * The lock file is linked into place complete (link(2) fails if it exists), so a reader never
 * sees half of one. A stale one is removed only under a second such file, the takeover, so of
 * two nodes that find it stale at once one removes it and the other then finds the first's.
 */
export async function lockDataDir(dataDir: string, log?: Logger): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  const path = join(dir, DATA_DIR_LOCK_FILE);
  const owner = await describeProcess(process.pid);
  const text = JSON.stringify(owner) + "\n";
  const staged = `${path}.${owner.pid}.${randomBytes(6).toString("hex")}`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(staged, text);
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await linked(staged, path)) {
        return { path, owner, [Symbol.asyncDispose]: () => release(path, text) };
      }
      const held = await readText(path);
      if (held === undefined) continue;
      const holder = parseOwner(held);
      if (holder && (await isAlive(holder))) throw new DataDirInUseError(dir, holder.pid);
      if (await removeStale(path, held, staged)) {
        log?.info(
          { data_dir: dir, stale_pid: holder?.pid },
          "took over the data dir from a process that is gone (a node that crashed)",
        );
      }
    }
    throw new Error(`could not lock data dir ${dir}: its lock file ${path} kept changing`);
  } catch (err) {
    if (!UNWRITABLE.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
    return unguarded(dir, path, owner, err as Error, log);
  } finally {
    await unlink(staged).catch(() => undefined);
  }
}

/** Why a lock file could not be written: a data dir natsmon may not write, a full disk, no hard links. */
const UNWRITABLE = new Set(["EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT", "ENOTSUP", "EOPNOTSUPP"]);

/**
 * A data dir no lock can be written in still refuses a node while a live one's lock is there;
 * otherwise the node starts as it did before locks, so that what it cannot do there (open a
 * catalog, start the embedded server) is reported as such, and retried.
 */
async function unguarded(
  dir: string,
  path: string,
  owner: DataDirOwner,
  cause: Error,
  log: Logger | undefined,
): Promise<DataDirLock> {
  const held = await readText(path).catch(() => undefined);
  const holder = held === undefined ? undefined : parseOwner(held);
  if (holder && (await isAlive(holder))) throw new DataDirInUseError(dir, holder.pid);
  log?.warn(
    { data_dir: dir, err: cause.message },
    `cannot write the lock of data dir ${dir}: nothing keeps another node from using it too`,
  );
  return { path, owner, [Symbol.asyncDispose]: async () => {} };
}

/**
 * Removes the stale lock `held`, if this process gets the takeover and the lock is still that
 * one. Under the takeover nothing else removes a lock, and one that names a dead process is
 * not removed by its owner, so the lock cannot change between the read and the unlink.
 */
async function removeStale(path: string, held: string, staged: string): Promise<boolean> {
  const takeover = `${path}.takeover`;
  if (!(await linked(staged, takeover))) {
    const busy = await readText(takeover);
    const taker = busy === undefined ? undefined : parseOwner(busy);
    if (taker && (await isAlive(taker))) {
      await new Promise((r) => setTimeout(r, 10));
    } else if (busy !== undefined && (await readText(takeover)) === busy) {
      // Left by a node that died while it took over (that rare, so no care for a race here).
      await unlink(takeover).catch(() => undefined);
    }
    return false;
  }
  try {
    if ((await readText(path)) !== held) return false;
    await unlink(path);
    return true;
  } finally {
    await unlink(takeover);
  }
}

/** link(2): false if `to` exists. */
async function linked(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (err) {
    if (isCode(err, "EEXIST")) return false;
    throw err;
  }
}

async function release(path: string, text: string): Promise<void> {
  // Only our own: a lock file that is not (removed by hand, then taken) stays its owner's.
  if ((await readText(path)) === text) await unlink(path).catch(() => undefined);
}

/** What identifies a running process: its pid, with its start time and boot where /proc tells them. */
export async function describeProcess(pid: number): Promise<DataDirOwner> {
  const started = await startTime(pid);
  const boot = await bootId();
  return { pid, ...(started ? { started } : {}), ...(boot ? { boot } : {}) };
}

/** Whether the process a lock names runs still: the same pid, started at the same time, this boot. */
export async function isAlive(owner: DataDirOwner): Promise<boolean> {
  const boot = await bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  const started = await startTime(owner.pid);
  if (started !== undefined) return owner.started === undefined || owner.started === started;
  if (await readText("/proc/self/stat")) return false;
  // No /proc (not Linux): a signal 0 tells whether the pid exists, if not whose it is.
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return isCode(err, "EPERM");
  }
}

/**
 * starttime, field 22 of /proc/<pid>/stat (the fields are counted after the command name's
 * `)`, which may hold spaces), or undefined for no such process. A zombie counts as none: it
 * has exited, and only waits for its parent to collect its exit status.
 */
async function startTime(pid: number): Promise<string | undefined> {
  const stat = await readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19];
}

async function bootId(): Promise<string | undefined> {
  return (await readText("/proc/sys/kernel/random/boot_id"))?.trim();
}

function parseOwner(text: string): DataDirOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<DataDirOwner>;
    return Number.isInteger(value.pid) && value.pid! > 0 ? (value as DataDirOwner) : undefined;
  } catch {
    return undefined;
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if (isCode(err, "ENOENT") || isCode(err, "ESRCH")) return undefined;
    throw err;
  }
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}
