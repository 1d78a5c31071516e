/**
 * Holding the data dir's lock once it is linked into place: its heartbeat, and noticing that
 * it is no longer this node's. A node stalled (SIGSTOP, a frozen VM or container) longer than
 * the lock's staleAfterMs, where its pid cannot be checked (another container or host), has
 * its lock taken over by the node that finds it stale; when it goes on, its first heartbeat
 * (overdue, so at once) finds another file at the lock's path and says so, and the node stops
 * before it writes to a data dir another node now uses.
 */
import { readFile, stat, unlink, type FileHandle } from "node:fs/promises";
import type { Logger } from "../lib/index.ts";

/** A held lock's heartbeat: refreshes the lock file's mtime, and resolves `lost` if the file at its path is no longer it. */
export interface LockHeartbeat {
  readonly lost: Promise<string>;
  stop(): Promise<void>;
}

/**
 * Refreshes the lock through `handle` (a handle on its own file, so a lock that replaced it is
 * never touched) every `heartbeatMs`, and checks each time that `path` is still that file.
 */
export function startHeartbeat(
  path: string,
  handle: FileHandle,
  heartbeatMs: number,
  log: Logger | undefined,
): LockHeartbeat {
  let warned = false;
  let gone = false;
  let onLost: (reason: string) => void = () => {};
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    const now = new Date();
    try {
      await handle.utimes(now, now);
      warned = false;
    } catch (err) {
      if (!warned)
        log?.warn({ lock: path, err: (err as Error).message }, `cannot refresh the data dir lock ${path}`);
      warned = true;
    }
    const [mine, there] = await Promise.all([handle.stat(), stat(path).catch(() => undefined)]);
    if (gone || (there && there.ino === mine.ino && there.dev === mine.dev)) return;
    gone = true;
    clearInterval(timer);
    const holder = (await readText(path).catch(() => undefined))?.trim();
    onLost(
      there
        ? `the data dir lock ${path} is another node's now (${holder ?? "unreadable"}): it took the data dir ` +
            "over while this node went unrefreshed for longer than the lock allows (stalled, or frozen); this " +
            "node stops, so that one node uses the data dir"
        : `the data dir lock ${path} was removed while this node ran; this node stops, so that no two nodes ` +
            "use the data dir (start it again once no other node runs there)",
    );
  };
  const timer = setInterval(() => {
    beating = beat().catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  return {
    lost,
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };
}

/** Removes the lock at `path` if it is still `text`: one removed by hand, then taken, stays its owner's. */
export async function release(path: string, text: string): Promise<void> {
  if ((await readText(path)) === text) await unlink(path).catch(() => undefined);
}

export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code === "ENOENT" || code === "ESRCH") return undefined;
    throw err;
  }
}
