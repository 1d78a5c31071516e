import { randomBytes } from "node:crypto";
import { link, mkdir, open, readlink, stat, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "../lib/index.ts";
import { readText, release, startHeartbeat } from "./data-dir-lock-hold.ts";

/** The lock file, in the data dir itself: a data dir reached by another path has the same one. */
export const DATA_DIR_LOCK_FILE = "natsmon.lock";

/** Who holds a data dir: enough to tell whether that process still runs. */
export interface DataDirOwner {
  pid: number;
  /** Its start time (/proc/<pid>/stat's starttime, clock ticks since boot): a reused pid has another. */
  started?: string;
  /** The kernel's boot id: after a reboot a pid and a start time can recur. */
  boot?: string;
  /**
   * Its pid namespace (`readlink /proc/self/ns/pid`, "pid:[4026531836]"): a pid names a
   * process only there. A node in another container on this host has another one.
   */
  ns?: string;
}

/** How the holder shows it runs where its pid cannot be checked; injectable for tests. */
export interface DataDirLockTiming {
  /** How often the holder refreshes its lock file's mtime. */
  heartbeatMs: number;
  /** How long a lock whose pid cannot be checked stays live after its last refresh. */
  staleAfterMs: number;
}

export const DATA_DIR_LOCK_TIMING: DataDirLockTiming = { heartbeatMs: 5_000, staleAfterMs: 15_000 };

/** A holder whose pid cannot be checked here: in another pid namespace, or on another boot (host). */
export interface ForeignHolder {
  ns?: string;
  /** Set when the boot differs: another host sharing the data dir. */
  boot?: string;
  /** Since the lock's last refresh, when it was seen refreshed. */
  ageMs: number;
  staleAfterMs: number;
}

export interface DataDirLock extends AsyncDisposable {
  readonly path: string;
  readonly owner: DataDirOwner;
  /** Resolves, with why, if the lock stops being this node's (taken over by another node, or removed). */
  readonly lost: Promise<string>;
}

/** Another live natsmon process holds the data dir. */
export class DataDirInUseError extends Error {
  readonly dataDir: string;
  readonly ownerPid: number;
  readonly foreign: ForeignHolder | undefined;

  constructor(dataDir: string, ownerPid: number, foreign?: ForeignHolder) {
    super(foreign ? foreignMessage(dataDir, ownerPid, foreign) : localMessage(dataDir, ownerPid));
    this.name = "DataDirInUseError";
    this.dataDir = dataDir;
    this.ownerPid = ownerPid;
    this.foreign = foreign;
  }
}

const OTHER_DATA_DIR = "give this node another node.data-dir (--data-dir, NATSMON_NODE_DATA_DIR)";

function localMessage(dataDir: string, pid: number): string {
  return `another natsmon node (pid ${pid}) is running on data dir ${dataDir}; stop it, or ${OTHER_DATA_DIR}`;
}

function foreignMessage(dataDir: string, pid: number, foreign: ForeignHolder): string {
  const where = foreign.boot
    ? `on another host (boot id ${foreign.boot})`
    : `in another container (pid namespace ${foreign.ns})`;
  const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;
  return (
    `another natsmon node (pid ${pid} ${where}) is running on data dir ${dataDir}: its lock was ` +
    `refreshed ${seconds(foreign.ageMs)} ago; stop that node where it runs (its pid means nothing ` +
    `here), or ${OTHER_DATA_DIR}. A lock no longer refreshed (its node crashed) is taken over ` +
    `${seconds(foreign.staleAfterMs)} after its last refresh`
  );
}

/**
 * Takes the data dir for this process, for as long as it runs or until the lock is disposed:
 * two nodes on one data dir would share its DuckDB files and its embedded nats-server (the
 * second would take the first's server for a crashed node's orphan and kill it). Throws
 * DataDirInUseError while another live process holds it. A lock left by a process that is
 * gone (a node killed with SIGKILL) is taken over.
 *
 * A holder in another pid namespace (another container sharing the volume) or on another boot
 * (another host on a network filesystem) cannot be told alive by its pid: there the holder's
 * heartbeat, the lock file's mtime it refreshes every `heartbeatMs`, decides. A contender that
 * finds such a lock watches it until it is refreshed (refused: the holder runs) or has gone
 * `staleAfterMs` without a refresh (taken over), so a container restarted after a crash, which
 * always has a new pid namespace, waits out the lock rather than exit.
 *
 * The lock file is linked into place complete (link(2) fails if it exists), so a reader never
 * sees half of one; the heartbeat changes its times only. A stale one is removed only under a
 * second such file, the takeover, so of two nodes that find it stale at once one removes it and
 * the other then finds the first's.
 */
export async function lockDataDir(
  dataDir: string,
  log?: Logger,
  timing: DataDirLockTiming = DATA_DIR_LOCK_TIMING,
): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  const path = join(dir, DATA_DIR_LOCK_FILE);
  const owner = await describeProcess(process.pid);
  const judge = (file: string, held: string) => judgeLock(file, held, owner, timing);
  const text = JSON.stringify(owner) + "\n";
  const staged = `${path}.${owner.pid}.${randomBytes(6).toString("hex")}`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(staged, text);
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await linked(staged, path)) return await holdLock(path, text, owner, timing, log);
      const found = await readText(path);
      if (found === undefined) continue;
      const verdict = await judge(path, found);
      if (verdict.state === "live") throw new DataDirInUseError(dir, verdict.pid, verdict.foreign);
      if (verdict.state === "changed") continue;
      if (await removeStale(path, found, staged, judge)) {
        const holder = parseOwner(found);
        log?.info({ data_dir: dir, stale_pid: holder?.pid, stale_ns: holder?.ns }, tookOver(verdict.quietMs));
      }
    }
    throw new Error(`could not lock data dir ${dir}: its lock file ${path} kept changing`);
  } catch (err) {
    if (!UNWRITABLE.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
    return unguarded(dir, path, owner, err as Error, judge, log);
  } finally {
    await unlink(staged).catch(() => undefined);
  }
}

function tookOver(quietMs: number | undefined): string {
  return quietMs === undefined
    ? "took over the data dir from a process that is gone (a node that crashed)"
    : "took over the data dir from a node whose pid cannot be checked here (another container or " +
        `host) and whose lock went unrefreshed for ${Math.round(quietMs / 1000)} s (a node that crashed)`;
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
  judge: Judge,
  log: Logger | undefined,
): Promise<DataDirLock> {
  const found = await readText(path).catch(() => undefined);
  const verdict = found === undefined ? undefined : await judge(path, found).catch(() => undefined);
  if (verdict?.state === "live") throw new DataDirInUseError(dir, verdict.pid, verdict.foreign);
  log?.warn(
    { data_dir: dir, err: cause.message },
    `cannot write the lock of data dir ${dir}: nothing keeps another node from using it too`,
  );
  return { path, owner, lost: new Promise<string>(() => {}), [Symbol.asyncDispose]: async () => {} };
}

/**
 * Removes the stale lock `found`, if this process gets the takeover and the lock is still that
 * one. Under the takeover nothing else removes a lock, and one that names a dead process is
 * not removed by its owner, so the lock cannot change between the read and the unlink.
 */
async function removeStale(path: string, found: string, staged: string, judge: Judge): Promise<boolean> {
  const takeover = `${path}.takeover`;
  if (!(await linked(staged, takeover))) {
    const busy = await readText(takeover);
    const verdict = busy === undefined ? undefined : await judge(takeover, busy);
    if (verdict?.state === "live") {
      await new Promise((r) => setTimeout(r, 10));
    } else if (verdict?.state === "stale" && (await readText(takeover)) === busy) {
      // Left by a node that died while it took over (that rare, so no care for a race here).
      await unlink(takeover).catch(() => undefined);
    }
    return false;
  }
  try {
    if ((await readText(path)) !== found) return false;
    await unlink(path);
    return true;
  } finally {
    await unlink(takeover);
  }
}

/**
 * The lock, linked into place: refreshed every `heartbeatMs` until disposed, and watched for
 * another node's taking it over (data-dir-lock-hold.ts).
 */
async function holdLock(
  path: string,
  text: string,
  owner: DataDirOwner,
  timing: DataDirLockTiming,
  log: Logger | undefined,
): Promise<DataDirLock> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    await release(path, text);
    throw err;
  }
  const heartbeat = startHeartbeat(path, handle, timing.heartbeatMs, log);
  return {
    path,
    owner,
    lost: heartbeat.lost,
    async [Symbol.asyncDispose]() {
      await heartbeat.stop();
      await handle.close();
      await release(path, text);
    },
  };
}

type Verdict =
  | { state: "live"; pid: number; foreign?: ForeignHolder }
  /** `quietMs`: how long the lock went without a refresh, when its heartbeat decided. */
  | { state: "stale"; quietMs?: number }
  /** The file was removed or replaced while it was judged: read it again. */
  | { state: "changed" };

type Judge = (path: string, found: string) => Promise<Verdict>;

/**
 * Whether the lock file at `path`, read as `found`, is a live node's. Its pid decides where it
 * means something here: the same pid namespace and boot as `self`, or a lock that does not
 * name them (an older natsmon's, or no /proc). Otherwise the heartbeat decides, if the lock
 * has one (it names its namespace); an older natsmon's lock from another boot never had one,
 * and is stale as before.
 */
async function judgeLock(
  path: string,
  found: string,
  self: DataDirOwner,
  timing: DataDirLockTiming,
): Promise<Verdict> {
  const holder = parseOwner(found);
  if (!holder) return { state: "stale" };
  const otherBoot = holder.boot !== undefined && self.boot !== undefined && holder.boot !== self.boot;
  const otherNs = holder.ns !== undefined && self.ns !== undefined && holder.ns !== self.ns;
  if (!otherBoot && !otherNs)
    return (await isAlive(holder)) ? { state: "live", pid: holder.pid } : { state: "stale" };
  if (holder.ns === undefined) return { state: "stale" };
  const foreign = {
    ...(otherBoot ? { boot: holder.boot } : { ns: holder.ns }),
    staleAfterMs: timing.staleAfterMs,
  };
  return watchHeartbeat(path, found, holder.pid, foreign, timing);
}

/**
 * Watches a lock whose holder cannot be checked by pid until it is refreshed (live) or goes
 * `staleAfterMs` without a refresh (stale), counted from its mtime by this host's clock (on
 * another host, clocks must agree within that) and then by the monotonic clock while watched.
 */
async function watchHeartbeat(
  path: string,
  found: string,
  pid: number,
  foreign: Omit<ForeignHolder, "ageMs">,
  timing: DataDirLockTiming,
): Promise<Verdict> {
  const first = await mtimeMs(path);
  if (first === undefined || (await readText(path)) !== found) return { state: "changed" };
  const quietAtStart = Math.max(0, Date.now() - first);
  const watchStart = performance.now();
  const pollMs = Math.max(10, Math.min(timing.heartbeatMs, timing.staleAfterMs) / 5);
  for (;;) {
    const quietMs = quietAtStart + (performance.now() - watchStart);
    if (quietMs >= timing.staleAfterMs) return { state: "stale", quietMs };
    await new Promise((r) => setTimeout(r, pollMs));
    const mtime = await mtimeMs(path);
    if (mtime === undefined || (await readText(path)) !== found) return { state: "changed" };
    if (mtime !== first)
      return { state: "live", pid, foreign: { ...foreign, ageMs: Math.max(0, Date.now() - mtime) } };
  }
}

async function mtimeMs(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch (err) {
    if (isCode(err, "ENOENT")) return undefined;
    throw err;
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

/** What identifies a running process: its pid, with its start time and boot where /proc tells them. */
export async function describeProcess(pid: number): Promise<DataDirOwner> {
  const started = await startTime(pid);
  const boot = await bootId();
  const ns = await readlink(`/proc/${pid}/ns/pid`).catch(() => undefined);
  return { pid, ...(started ? { started } : {}), ...(boot ? { boot } : {}), ...(ns ? { ns } : {}) };
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

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}
