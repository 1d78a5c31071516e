/**
 * Imported first by main.ts. DuckDB runs every query on a libuv worker, shared with fs,
 * dns and crypto; with the default 4 workers a few slow queries stall everything else
 * (stack-notes §2: a 7th query waited 3.5 s). The pool is created on first use, so this
 * must run before any other import does I/O on it.
 */
process.env.UV_THREADPOOL_SIZE ??= "16";
