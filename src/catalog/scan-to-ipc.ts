/**
 * A query result as one Arrow IPC stream, in process: the same scan and encoding
 * db.query.stream uses, without the bus. For benchmarks and local tools.
 */
import { IpcMessageEncoder, END_OF_STREAM, type IpcCompression } from "../lib/index.ts";
import { openArrowScan, type ArrowScanOptions } from "./arrow-scan.ts";
import type { Catalog } from "./open-catalog.ts";
import type { ReadOnlyQuery } from "./query.ts";

export interface ScanToIpcOptions extends Partial<ArrowScanOptions> {
  readonly compression: IpcCompression;
  /** Rows per record batch; default 65,536. */
  readonly batchRows?: number;
  /**
   * Receives the stream message by message: the schema, each record batch, then the
   * end-of-stream marker. Without it the messages are concatenated and returned.
   */
  readonly onMessage?: (message: Uint8Array) => void | Promise<void>;
}

export interface ScanToIpcResult {
  readonly rows: number;
  /** Record batches written (the schema message not counted). */
  readonly batches: number;
  /** Bytes of the whole IPC stream. */
  readonly bytes: number;
  /** The IPC stream, when no `onMessage` was given. */
  readonly ipc?: Uint8Array;
}

/** Runs `request` (behind the read-only guard unless `trusted`) and encodes its result as Arrow IPC. */
export async function scanToIpc(
  catalog: Catalog,
  request: ReadOnlyQuery,
  options: ScanToIpcOptions,
): Promise<ScanToIpcResult> {
  const scan = await openArrowScan(catalog, request, {
    pool: options.pool ?? "query",
    stepTimeoutMs: options.stepTimeoutMs ?? 60_000,
    ...(options.trusted ? { trusted: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const parts: Uint8Array[] = [];
  const emit = options.onMessage ?? ((m: Uint8Array) => void parts.push(m));
  let rows = 0;
  let batches = 0;
  let bytes = 0;
  try {
    const encoder = new IpcMessageEncoder(scan.schema, options.compression);
    const write = async (message: Uint8Array) => {
      bytes += message.byteLength;
      await emit(message);
    };
    await write(encoder.schemaMessage);
    for (;;) {
      const batch = await scan.next(options.batchRows ?? 65_536);
      if (!batch) break;
      rows += batch.numRows;
      batches++;
      await write(encoder.encode(batch));
    }
    await write(END_OF_STREAM);
  } finally {
    await scan.close();
  }
  if (options.onMessage) return { rows, batches, bytes };
  const ipc = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    ipc.set(part, at);
    at += part.byteLength;
  }
  return { rows, batches, bytes, ipc };
}
