/**
 * npm run bench:query — the query path at scale, measured on this machine, in one run
 * against one catalog:
 *
 * 1. Builds a catalog in a temporary data dir with `main.bench`: BENCH_ROWS (1,000,000)
 *    rows × 10 columns of mixed types (int, bigint, double, short and long varchar,
 *    timestamp, bool, decimal, nullable int, a second double), and a byte-for-byte copy of
 *    the file (DuckDB locks a file to one process, and the two sides must run side by side).
 * 2. Starts a real natsmon node on the original (a separate process with an embedded bus,
 *    catalog role only, so nothing else runs there) and opens the copy in this process.
 * 3. Interleaves, run by run so a change in the machine's load hits both sides alike:
 *    - the 1M-row result over db.query.stream, read by a client in its own process started
 *      as `npm run natsmon` starts node (bench/query-client.ts: request, every chunk
 *      received and acked, with and without
 *      decoding, trailer) against the same result converted to Arrow IPC in-process
 *      (catalog's scanToIpc: openArrowScan + the IPC stream writer, batches as large as the
 *      server's chunks),
 *      for compression none, lz4 and zstd;
 *    - db.query round trips of a 1,000-row result against runReadOnlyQuery in-process.
 *
 * Prints medians, rows/s and MB/s, the CPU time of each process (node, its nats-server,
 * client: where the stream's time goes), and the ratios (stream / in-process rows/s, target
 * ≥ 0.70, of the medians and run by run; db.query round trip / in-process, target < 1.5x),
 * and the load average, since other work on the machine skews every figure. Asserts nothing.
 *
 * npm runs this process with the CLI's `--initial-heap-size=128` (see src/cli/v8-heap.ts).
 * Its small JS heap would otherwise answer the in-process side's megabyte buffers with
 * full collections, about five per run, that the node (started with the flag, as `npm
 * start` and the installed binary start it) does not have: the in-process figure would be slower than the node's own conversion, and the
 * ratio flattered (measured: none 0.73–0.78 with them, 0.60–0.63 without, same code).
 *   BENCH_ROWS=1000000 BENCH_RUNS=5 BENCH_SMALL_RUNS=200 BENCH_COMPRESSIONS=none,lz4,zstd npm run bench:query
 */
// natsmon's process setup, as the node has it: the in-process side runs the same code.
import "../src/cli/v8-heap.ts";
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { openCatalog, runReadOnlyQuery, scanToIpc, type Catalog } from "../src/catalog/index.ts";
import { DEFAULT_CHECKPOINT_BYTES, type DbConfig } from "../src/config/index.ts";
import { END_OF_STREAM } from "../src/lib/index.ts";
import { STREAM_COMPRESSIONS, systemSubjects, type StreamCompression } from "../src/protocol/index.ts";
import { spawnNatsmon } from "../test/harness/natsmon-process.ts";
import type { StreamJob, StreamResult } from "./query-client.ts";
import { tempDir } from "../test/harness/temp-dir.ts";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SMALL_RUNS = Number(process.env.BENCH_SMALL_RUNS ?? 200);
const SMALL_ROWS = 1_000;
const SYSTEM = "bench";
const BIG_SQL = "SELECT * FROM main.bench";
/** Compressions to measure, comma-separated (default: all three). */
const COMPRESSIONS: readonly StreamCompression[] = (
  process.env.BENCH_COMPRESSIONS ?? STREAM_COMPRESSIONS.join(",")
)
  .split(",")
  .map((c) => {
    const known = STREAM_COMPRESSIONS.find((k) => k === c.trim());
    if (!known) throw new Error(`BENCH_COMPRESSIONS: ${c} is none of ${STREAM_COMPRESSIONS.join(", ")}`);
    return known;
  });
const SMALL_SQL = `SELECT * FROM main.bench LIMIT ${SMALL_ROWS}`;

const DB: DbConfig = {
  retentionMs: 0,
  memoryLimit: "4GB",
  checkpointThresholdBytes: DEFAULT_CHECKPOINT_BYTES,
  threads: 0,
  queryMaxRows: 100_000,
  queryTimeoutMs: 120_000,
  queryStream: { maxRows: 0, window: 8, compression: "none", ackTimeoutMs: 5_000 },
  memoryProfile: { enabled: false, intervalMs: 2_000 },
};

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const fmt = (n: number, digits = 1) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

/** Ten columns of the types natsmon's tables hold; a quarter of `maybe` is NULL. */
async function buildCatalog(path: string): Promise<void> {
  await using catalog = await openCatalog({ path, db: DB });
  const t0 = performance.now();
  await catalog.withWriter(async ({ con }) => {
    await con.run(`
      CREATE TABLE main.bench AS
      SELECT
        i::INTEGER                                              AS id,
        (i * 7919)::BIGINT * 1000003                            AS big,
        i * 0.5 + 0.25                                          AS val,
        'k' || (i % 1000)                                       AS short_text,
        'a longer varchar value, number ' || i                  AS long_text,
        TIMESTAMP '2026-01-01 00:00:00' + to_microseconds(i * 1000003) AS ts,
        i % 3 = 0                                               AS flag,
        ((i % 100000) * 0.001)::DECIMAL(18, 3)                  AS amount,
        CASE WHEN i % 4 = 0 THEN NULL ELSE (i % 1000)::INTEGER END AS maybe,
        sqrt(i)                                                 AS ratio
      FROM range(${ROWS}) t(i)`);
    await con.run("CHECKPOINT");
  });
  console.log(
    `catalog: ${fmt(ROWS, 0)} rows × 10 columns built in ${fmt((performance.now() - t0) / 1000, 2)} s`,
  );
}

interface Run {
  rows: number;
  bytes: number;
  chunks: number;
  ms: number;
  /** CPU ms per process during a stream run. */
  cpu?: { node: number; nats: number; client: number };
}

async function time(call: () => Promise<Omit<Run, "ms">>): Promise<Run> {
  const t0 = performance.now();
  const result = await call();
  return { ...result, ms: performance.now() - t0 };
}

/** Linux: a process's CPU time (user + system), in ms, from /proc; 0 elsewhere. */
async function cpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** The node flags of the `natsmon` npm script (`node FLAGS… src/main.ts`): how natsmon's CLI runs. */
async function cliNodeFlags(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: { natsmon: string };
  };
  return pkg.scripts.natsmon.split(" ").slice(1, -1);
}

/** Linux: the pid of `parent`'s child process named `name` (the node's embedded nats-server). */
async function childNamed(parent: number, name: string): Promise<number | undefined> {
  for (const entry of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const open = stat.indexOf(" (");
    const close = stat.lastIndexOf(") ");
    if (open < 0 || close < 0) continue;
    if (stat.slice(open + 2, close) === name && Number(stat.slice(close + 2).split(" ")[1]) === parent) {
      return Number(entry);
    }
  }
  return undefined;
}

/** The forked stream client (bench/query-client.ts) and the node's processes, for CPU figures. */
interface StreamSide {
  readonly client: ChildProcess;
  readonly nodePid: number | undefined;
  readonly natsPid: number | undefined;
}

/**
 * db.query.stream end to end, by the client process: request, every chunk received and
 * acked, trailer. `decoded` also decodes each chunk into a record batch, work the
 * in-process side does not do: the undecoded run is the like-for-like comparison (Arrow
 * IPC produced vs delivered), the decoded one what a client that reads every value sees.
 * Also takes the CPU time each process spent: the node, its nats-server and the client.
 */
async function streamRun(side: StreamSide, compression: StreamCompression, decoded: boolean): Promise<Run> {
  const job: StreamJob = {
    subject: systemSubjects(SYSTEM).dbQueryStream,
    sql: BIG_SQL,
    compression,
    decoded,
  };
  const node0 = await cpuMs(side.nodePid);
  const nats0 = await cpuMs(side.natsPid);
  const answer = once(side.client, "message") as Promise<[StreamResult]>;
  side.client.send(job);
  const [result] = await answer;
  if (!result.ok) throw new Error(`stream client: ${result.error}`);
  return {
    rows: result.rows,
    bytes: result.bytes,
    chunks: result.chunks,
    ms: result.ms,
    cpu: {
      node: (await cpuMs(side.nodePid)) - node0,
      nats: (await cpuMs(side.natsPid)) - nats0,
      client: result.cpuMs,
    },
  };
}

/**
 * openArrowScan + the IPC stream writer with no bus (catalog's scanToIpc), in batches of
 * `batchRows`: what the stream is measured against. Messages are dropped as made, as the
 * stream's client drops them once decoded.
 */
function inProcessRun(catalog: Catalog, compression: StreamCompression, batchRows: number): Promise<Run> {
  return time(async () => {
    const cpu0 = process.cpuUsage();
    const result = await scanToIpc(
      catalog,
      { sql: BIG_SQL },
      { compression, batchRows, stepTimeoutMs: 120_000, onMessage: () => undefined },
    );
    const cpu = process.cpuUsage(cpu0);
    // The end-of-stream marker is no chunk of the stream: count what the trailer counts.
    return {
      rows: result.rows,
      bytes: result.bytes - END_OF_STREAM.byteLength,
      chunks: result.batches + 1,
      cpu: { node: (cpu.user + cpu.system) / 1000, nats: 0, client: 0 },
    };
  });
}

function smallInProcess(catalog: Catalog): Promise<string> {
  return runReadOnlyQuery(
    catalog,
    { sql: SMALL_SQL },
    { maxRows: DB.queryMaxRows, timeoutMs: 60_000, format: "json" },
  );
}

async function smallOverNats(nc: NatsConnection): Promise<Uint8Array> {
  const reply = await nc.request(systemSubjects(SYSTEM).dbQuery, JSON.stringify({ sql: SMALL_SQL }), {
    timeout: 60_000,
  });
  const code = reply.headers?.get("Nats-Service-Error-Code");
  if (code) throw new Error(`db.query: ${code} ${reply.headers?.get("Nats-Service-Error")}`);
  return reply.data;
}

function printTable(head: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

function figureRow(label: string, runs: readonly Run[]): string[] {
  const ms = median(runs.map((r) => r.ms));
  const { rows, bytes, chunks } = runs[0]!;
  const cpu = (pick: (c: NonNullable<Run["cpu"]>) => number) => {
    const figure = median(runs.map((r) => (r.cpu ? pick(r.cpu) : 0)));
    return figure > 0 ? fmt(figure, 0) : "-";
  };
  return [
    label,
    fmt(rows, 0),
    fmt(chunks, 0),
    fmt(bytes / 1e6),
    fmt(ms, 0),
    fmt(rows / (ms / 1000) / 1e6, 2),
    fmt(bytes / 1e6 / (ms / 1000)),
    cpu((c) => c.node),
    cpu((c) => c.nats),
    cpu((c) => c.client),
  ];
}

async function bigResult(side: StreamSide, catalog: Catalog): Promise<void> {
  const stream = new Map<StreamCompression, Run[]>();
  const decoded = new Map<StreamCompression, Run[]>();
  const local = new Map<StreamCompression, Run[]>();
  const batchRows = new Map<StreamCompression, number>();
  // Warm-up: one stream run per compression, which also tells the rows per chunk the
  // server chose (sized to the bus's max_payload); in-process batches use the same size.
  for (const c of COMPRESSIONS) {
    const warm = await streamRun(side, c, true);
    batchRows.set(c, Math.ceil(warm.rows / Math.max(1, warm.chunks - 1)));
    await inProcessRun(catalog, c, batchRows.get(c)!);
    stream.set(c, []);
    decoded.set(c, []);
    local.set(c, []);
  }
  for (let i = 0; i < RUNS; i++) {
    for (const c of COMPRESSIONS) {
      local.get(c)!.push(await inProcessRun(catalog, c, batchRows.get(c)!));
      stream.get(c)!.push(await streamRun(side, c, false));
      decoded.get(c)!.push(await streamRun(side, c, true));
    }
  }
  console.log(
    `\n${fmt(ROWS, 0)}-row result as Arrow IPC (median of ${RUNS} interleaved runs after a warm-up)`,
  );
  printTable(
    ["", "rows", "chunks", "MB", "ms", "M rows/s", "MB/s", "CPU ms: node", "nats-server", "client"],
    COMPRESSIONS.flatMap((c) => [
      figureRow(`in-process ${c}`, local.get(c)!),
      figureRow(`db.query.stream ${c}`, stream.get(c)!),
      figureRow(`  + client decodes ${c}`, decoded.get(c)!),
    ]),
  );
  console.log(
    "(CPU: the node's process, or the bench process for in-process; the node's nats-server; the client process)",
  );
  console.log(
    "\nratio db.query.stream / in-process, rows/s (target ≥ 0.70); in brackets with the client decoding each batch",
  );
  for (const c of COMPRESSIONS) {
    const ms = (runs: readonly Run[]) => median(runs.map((r) => r.ms));
    const ratio = ms(local.get(c)!) / ms(stream.get(c)!);
    const withDecode = ms(local.get(c)!) / ms(decoded.get(c)!);
    // Each run's in-process and stream figures were taken back to back: their ratio, run by
    // run, shows how far the machine's load moves the median.
    const perRun = local.get(c)!.map((l, i) => l.ms / stream.get(c)![i]!.ms);
    console.log(
      `  ${c.padEnd(5)} ${fmt(ratio, 2)}${ratio >= 0.7 ? "" : "  (missed)"}  (${fmt(withDecode, 2)})` +
        `  run by run: ${perRun.map((r) => fmt(r, 2)).join(" ")}, median ${fmt(median(perRun), 2)}`,
    );
  }
  // The node, its nats-server and the client share this machine's cores: the stream cannot
  // finish before their CPU time, spread perfectly over every core, is spent.
  const cores = availableParallelism();
  console.log(
    "\nceiling on this machine: the ratio if the stream's CPU (node + nats-server + client) " +
      `kept all ${cores} CPUs busy`,
  );
  for (const c of COMPRESSIONS) {
    const runs = stream.get(c)!;
    const cpu = median(runs.map((r) => (r.cpu ? r.cpu.node + r.cpu.nats + r.cpu.client : 0)));
    if (cpu === 0) continue;
    const floorMs = cpu / cores;
    const inProcessMs = median(local.get(c)!.map((r) => r.ms));
    console.log(
      `  ${c.padEnd(5)} ${fmt(inProcessMs / floorMs, 2)}  (${fmt(cpu, 0)} ms of CPU: the stream takes at least ${fmt(floorMs, 0)} ms; in-process ${fmt(inProcessMs, 0)} ms)`,
    );
  }
}

async function smallResult(nc: NatsConnection, catalog: Catalog): Promise<void> {
  const check = JSON.parse(await smallInProcess(catalog)) as unknown[];
  if (check.length !== SMALL_ROWS) throw new Error(`in-process query gave ${check.length} rows`);
  for (let i = 0; i < 20; i++) {
    await smallInProcess(catalog);
    await smallOverNats(nc);
  }
  // Blocks of ten, alternating, so both sides see the same machine.
  const local: number[] = [];
  const remote: number[] = [];
  for (let done = 0; done < SMALL_RUNS; done += 10) {
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await smallInProcess(catalog);
      local.push(performance.now() - t0);
    }
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await smallOverNats(nc);
      remote.push(performance.now() - t0);
    }
  }
  const ratio = median(remote) / median(local);
  console.log(
    `\ndb.query, ${SMALL_ROWS} rows × 10 columns (median of ${local.length} each, after 20 warm-up runs)`,
  );
  console.log(`  in-process runReadOnlyQuery  ${fmt(median(local), 2)} ms`);
  console.log(`  db.query round trip          ${fmt(median(remote), 2)} ms`);
  console.log(
    `  ratio                        ${fmt(ratio, 2)}x (target < 1.5x)${ratio < 1.5 ? "" : "  (missed)"}`,
  );
}

async function main(): Promise<void> {
  await using dir = await tempDir("natsmon-bench-query-");
  const nodeDir = join(dir.path, "node");
  const localDir = join(dir.path, "local");
  await mkdir(nodeDir);
  await mkdir(localDir);
  await buildCatalog(join(nodeDir, `${SYSTEM}.duckdb`));
  await copyFile(join(nodeDir, `${SYSTEM}.duckdb`), join(localDir, `${SYSTEM}.duckdb`));

  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(nodeDir)}}`,
      "sink: {embedded: {port: -1}}",
      `system: {id: ${SYSTEM}, roles: [catalog]}`,
      `db: {memory-limit: ${DB.memoryLimit}, query-timeout: 120s, query-stream: {max-rows: 0}}`,
      "log: {level: warn}",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl(60_000);
  await using catalog = await openCatalog({ path: join(localDir, `${SYSTEM}.duckdb`), db: DB });
  const nc = await connect({ servers: url });
  const nodePid = node.child.pid;
  // Started as `npm run natsmon -- query` starts node, with the same V8 flags.
  const client = fork(fileURLToPath(new URL("./query-client.ts", import.meta.url)), [url], {
    execArgv: await cliNodeFlags(),
  });
  const side: StreamSide = {
    client,
    nodePid,
    natsPid: nodePid === undefined ? undefined : await childNamed(nodePid, "nats-server"),
  };
  try {
    console.log(`load average before: ${load()}`);
    await bigResult(side, catalog);
    await smallResult(nc, catalog);
    console.log(
      `\nload average after: ${load()} (${availableParallelism()} CPUs: a load above that means other work shared them)`,
    );
  } finally {
    client.disconnect();
    await nc.close();
  }
}

await main();
