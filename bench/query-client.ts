/**
 * The db.query.stream client of `npm run bench:query`, in a process of its own as every
 * real client is (`natsmon query`, the gateway): the bench process also holds the
 * in-process catalog, and a client sharing its heap and threads would be measured with
 * their garbage collection, not its own. Forked with the bus URL; answers each
 * `StreamJob` message with a `StreamResult`.
 */
// natsmon's process setup, as `natsmon query` has it.
import "../src/cli/v8-heap.ts";
import { connect } from "@nats-io/transport-node";
import { readArrowStream } from "../src/cli/stream-client.ts";
import type { StreamCompression } from "../src/protocol/index.ts";

export interface StreamJob {
  readonly subject: string;
  readonly sql: string;
  readonly compression: StreamCompression;
  /** Decode every chunk into a record batch (what a client reading each value does). */
  readonly decoded: boolean;
}

export type StreamResult =
  | { ok: true; rows: number; bytes: number; chunks: number; ms: number; cpuMs: number }
  | { ok: false; error: string };

const url = process.argv[2];
if (!url || !process.send)
  throw new Error("bench/query-client.ts is forked by bench/query.ts with the bus URL");
const nc = await connect({ servers: url });

async function run(job: StreamJob): Promise<StreamResult> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const stream = await readArrowStream(
    nc,
    job.subject,
    { sql: job.sql, compression: job.compression },
    { timeoutMs: 60_000 },
  );
  let rows = 0;
  let chunks = 1;
  if (job.decoded) for await (const batch of stream) rows += batch.numRows;
  else for await (const _ of stream.chunks()) chunks++;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const totals = stream.totals;
  if (!totals) throw new Error("stream: no end trailer");
  if (job.decoded ? totals.rows !== rows : totals.chunks !== chunks) {
    throw new Error(`stream: ${rows} rows / ${chunks} chunks, trailer ${totals.rows} / ${totals.chunks}`);
  }
  return {
    ok: true,
    rows: totals.rows,
    bytes: totals.bytes,
    chunks: totals.chunks,
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

process.on("message", (job: StreamJob) => {
  run(job).then(
    (result) => process.send!(result),
    (err: unknown) => process.send!({ ok: false, error: String(err) } satisfies StreamResult),
  );
});
process.once("disconnect", () => void nc.close());
