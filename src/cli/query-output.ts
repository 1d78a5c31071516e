/**
 * Where `natsmon query` writes: stdout or `--out FILE`, with back-pressure, so a result of
 * any size streams through in bounded memory; and the rows-so-far line on stderr.
 */
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { once } from "node:events";
import type { Writable } from "node:stream";

export interface Output {
  /** Resolves once the destination can take more. */
  write(data: string | Uint8Array): Promise<void>;
  /** Flushes and closes a file (stdout stays open). */
  close(): Promise<void>;
  /** After a failure: a half-written file is removed rather than left to pass for a result. */
  discard(): Promise<void>;
  /** True once the reader went away (a closed pipe, as with `| head`): stop producing. */
  readonly closed: boolean;
}

/** stdout, or FILE created on the first write (a query that fails at once leaves no file). */
export function openOutput(file: string | undefined): Output {
  let stream: Writable | undefined = file ? undefined : process.stdout;
  // Set from stream events, read after each await.
  const state: { closed: boolean; failure?: Error } = { closed: false };
  const rethrow = () => {
    if (state.failure) throw state.failure;
  };
  const target = (): Writable => {
    if (stream) return stream;
    const created = createWriteStream(file!);
    created.on("error", (err) => (state.failure = err));
    stream = created;
    return created;
  };
  if (!file) {
    process.stdout.on("error", (err: NodeJS.ErrnoException) => {
      // A reader that stops reading early is normal at a shell prompt, not an error.
      if (err.code === "EPIPE") state.closed = true;
      else state.failure = err;
    });
  }
  return {
    get closed() {
      return state.closed;
    },
    async write(data) {
      rethrow();
      if (state.closed) return;
      const out = target();
      if (!out.write(data)) await drained(out);
      rethrow();
    },
    async close() {
      if (!file || !stream) return;
      const finished = once(stream, "finish");
      stream.end();
      await finished;
      rethrow();
    },
    async discard() {
      if (!file || !stream) return;
      stream.destroy();
      await rm(file, { force: true });
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

/** Rows so far on stderr, for a result that takes a while, only when stderr is a terminal. */
export interface Progress {
  rows(total: number): void;
  done(): void;
}

const PROGRESS_AFTER_MS = 500;
const PROGRESS_EVERY_MS = 200;

export function progressOnStderr(): Progress {
  const err = process.stderr;
  if (!err.isTTY) return { rows: () => undefined, done: () => undefined };
  const started = performance.now();
  let shownAt = 0;
  let shown = false;
  return {
    rows(total) {
      const now = performance.now();
      if (now - started < PROGRESS_AFTER_MS || now - shownAt < PROGRESS_EVERY_MS) return;
      shownAt = now;
      shown = true;
      err.write(`\r\x1b[Knatsmon: ${total.toLocaleString("en-US")} rows…`);
    },
    done() {
      if (shown) err.write("\r\x1b[K");
    },
  };
}
