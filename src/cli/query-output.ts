/**
 * Where `natsmon query` writes: stdout or `--out FILE`, with back-pressure, so a result of
 * any size streams through in bounded memory; and the progress line on stderr.
 */
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { tempPathFor } from "./backup-output.ts";
import { size, type ProgressSink } from "./backup-progress.ts";

export interface Output {
  /** Resolves once the destination can take more. */
  write(data: string | Uint8Array): Promise<void>;
  /** Flushes; a file's result then takes FILE's place (stdout stays open). */
  close(): Promise<void>;
  /** After a failure or a signal: the result so far is removed, and FILE is left as it was. */
  discard(): Promise<void>;
  /** True once the reader went away (a closed pipe, as with `| head`): stop producing. */
  readonly closed: boolean;
}

/**
 * stdout, or FILE. A file's result is written to a temporary file beside FILE (same
 * directory, so same file system) and renamed over FILE only once complete: a query that
 * fails or is interrupted leaves an existing FILE as it was and no partial file behind.
 */
export function openOutput(file: string | undefined): Output {
  return file ? fileOutput(resolve(file)) : stdoutOutput();
}

function stdoutOutput(): Output {
  const out = process.stdout;
  // Set from stream events, read after each await.
  const state: { closed: boolean; failure?: Error } = { closed: false };
  out.on("error", (err: NodeJS.ErrnoException) => {
    // A reader that stops reading early is normal at a shell prompt, not an error.
    if (err.code === "EPIPE") state.closed = true;
    else state.failure = err;
  });
  const rethrow = () => {
    if (state.failure) throw state.failure;
  };
  return {
    get closed() {
      return state.closed;
    },
    async write(data) {
      rethrow();
      if (state.closed) return;
      if (!out.write(data)) await drained(out);
      rethrow();
    },
    close: () => Promise.resolve(),
    discard: () => Promise.resolve(),
  };
}

function fileOutput(file: string): Output {
  const temp = tempPathFor(file, process.pid);
  let stream: Writable | undefined;
  const state: { discarded: boolean; failure?: Error } = { discarded: false };
  const rethrow = () => {
    if (state.failure) throw state.failure;
  };
  // Created on the first write, so a query refused at once never touches the directory.
  const target = (): Writable => {
    if (stream) return stream;
    if (state.discarded) throw new Error(`${file}: output already discarded`);
    const created = createWriteStream(temp);
    created.on("error", (err) => (state.failure = err));
    stream = created;
    return created;
  };
  return {
    closed: false,
    async write(data) {
      rethrow();
      const out = target();
      if (!out.write(data)) await drained(out);
      rethrow();
    },
    async close() {
      rethrow();
      // An empty result is still a result: FILE is replaced by an empty file.
      const out = target();
      const finished = once(out, "finish");
      out.end();
      await finished;
      rethrow();
      await rename(temp, file);
    },
    async discard() {
      state.discarded = true;
      if (!stream) return;
      // Wait for the descriptor to close: a file still being opened would otherwise be
      // created after it was removed.
      if (!stream.closed) {
        const closed = new Promise((done) => stream!.once("close", done));
        stream.destroy();
        await closed;
      }
      await rm(temp, { force: true });
    },
  };
}

/** Resolves on `drain` (room again) or `close` (no point waiting), leaving no listener behind. */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
  });
}

/** Rows and bytes received so far, for a result that takes a while, only on a terminal. */
export interface Progress {
  update(rows: number, bytes: number): void;
  done(): void;
}

/** Quiet for a result that arrives at once; then redrawn at most this often. */
const PROGRESS_AFTER_MS = 500;
const PROGRESS_EVERY_MS = 200;

export function progressOn(
  out: ProgressSink = process.stderr,
  now: () => number = () => performance.now(),
): Progress {
  if (!out.isTTY) return { update: () => undefined, done: () => undefined };
  const started = now();
  let shownAt = 0;
  let shown = false;
  return {
    update(rows, bytes) {
      const at = now();
      if (at - started < PROGRESS_AFTER_MS || (shown && at - shownAt < PROGRESS_EVERY_MS)) return;
      shownAt = at;
      shown = true;
      out.write(`\r\x1b[Knatsmon: ${rows.toLocaleString("en-US")} rows, ${size(bytes)} received…`);
    },
    done() {
      if (shown) out.write("\r\x1b[K");
    },
  };
}
