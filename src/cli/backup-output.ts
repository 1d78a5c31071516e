/**
 * Where `natsmon backup` writes: a hidden temporary file next to FILE, renamed to FILE in
 * one step once complete, removed on any failure, so FILE is either complete or absent.
 */
import { randomBytes } from "node:crypto";
import { rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { BackupFile } from "../catalog/index.ts";

/**
 * `.FILE.<pid>-<random>.partial` beside FILE: on the same file system, so the rename is
 * atomic. The pid alone is not unique: a run killed outright (SIGKILL, the OOM killer) leaves
 * its file, and the next run often gets the same pid (PID 1 in a container); two containers
 * sharing a volume can even run at once with the same pid. DuckDB would open such a file
 * rather than create one, so each run names its own and never touches another's.
 */
export function tempPathFor(out: string, pid: number, unique = randomBytes(4).toString("hex")): string {
  return join(dirname(out), `.${basename(out)}.${pid}-${unique}.partial`);
}

/**
 * Why FILE cannot be written, for a person, or undefined when it can. Checked before
 * anything is asked: otherwise a directory given as FILE, or a missing one holding it,
 * fails only once the whole backup (or query result) has been streamed.
 */
export async function outputProblem(
  given: string,
  out: string,
  example = "backup.duckdb",
): Promise<string | undefined> {
  if (given.trim() === "") return `--out needs a file name, e.g. --out ${example}`;
  const found = await stat(out).catch(() => undefined);
  if (found?.isDirectory()) {
    return `--out ${out} is a directory; name the file to write, e.g. --out ${join(out, example)}`;
  }
  const parent = await stat(dirname(out)).catch(() => undefined);
  if (!parent) return `--out ${out}: the directory ${dirname(out)} does not exist; create it first`;
  if (!parent.isDirectory()) return `--out ${out}: ${dirname(out)} is not a directory`;
  return undefined;
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Checkpoints `file` (the temporary file) and renames it to `out`. An abort of `signal` up
 * to the rename is honoured: this throws its reason, `out` is untouched, and the caller
 * removes the temporary file. Once renamed, the backup is complete and stays: a signal
 * arriving then changes nothing (and with `replace`, the file it replaced is gone already).
 */
export async function commitBackup(
  file: BackupFile,
  out: string,
  options: { replace: boolean; signal: AbortSignal },
): Promise<void> {
  await file.close();
  options.signal.throwIfAborted();
  if (!options.replace && (await exists(out))) throw new Error(`${out} appeared meanwhile; not replaced`);
  options.signal.throwIfAborted();
  await rename(file.path, out);
}

/** The temporary file and what DuckDB may have left beside it (its WAL, its spill directory). */
export async function removeTemp(temp: string): Promise<void> {
  await Promise.all(
    [temp, `${temp}.wal`, `${temp}.tmp`].map((path) => rm(path, { force: true, recursive: true })),
  );
}
