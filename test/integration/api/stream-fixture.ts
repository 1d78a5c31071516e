/**
 * db.query and db.query.stream served from a real catalog file on a real nats-server, with
 * a separate client connection, as a remote client would see them.
 */
import { connect } from "@nats-io/transport-node";
import { createInbox, type Msg, type NatsConnection } from "@nats-io/nats-core";
import type { RecordBatch } from "apache-arrow";
import {
  dbQueryHandler,
  dbQueryStreamHandler,
  startApi,
  type QueryStreamPort,
  type StreamOutcome,
} from "../../../src/api/index.ts";
import { openArrowScan, runReadOnlyQuery, type Catalog } from "../../../src/catalog/index.ts";
import type { DbConfig } from "../../../src/config/index.ts";
import { CatalogUnavailableError } from "../../../src/domain/index.ts";
import { silentLogger, type Logger } from "../../../src/lib/index.ts";
import { StreamHeader, systemSubjects } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";
import { TEST_DB, tempCatalog } from "../catalog/lab-epoch.ts";

export const STREAM_DB: DbConfig = {
  ...TEST_DB,
  queryMaxRows: 1_000_000,
  queryTimeoutMs: 30_000,
  queryStream: { maxRows: 0, window: 4, compression: "none", ackTimeoutMs: 1_000 },
};

export interface StreamFixture extends AsyncDisposable {
  /** The client's connection (not the one the service runs on). */
  readonly nc: NatsConnection;
  readonly catalog: Catalog;
  readonly subjects: ReturnType<typeof systemSubjects>;
  /** How each stream served so far ended, in order. */
  readonly outcomes: StreamOutcome[];
  /** db.query's JSON for `sql`, run in process (a 200k-row reply is over max_payload). */
  queryJson(sql: string): Promise<Record<string, unknown>[]>;
  /** Makes the catalog look closed (503) or open again. */
  setOpen(open: boolean): void;
  /** Once resolved, every message the service published so far has reached the client. */
  flush(): Promise<void>;
}

export async function startStreamFixture(
  db: DbConfig = STREAM_DB,
  options: { log?: Logger } = {},
): Promise<StreamFixture> {
  const server = await startTestServer();
  const temp = await tempCatalog(db);
  const serviceNc = await connect({ servers: server.url });
  const nc = await connect({ servers: server.url });
  const log = options.log ?? silentLogger();
  const api = await startApi(serviceNc, {
    nodeId: "n1",
    discovery: () => ({ node_id: "n1", version: "0", capabilities: {}, systems: [] }),
    log,
  });
  let open = true;
  const opened = (): Catalog => {
    if (!open) throw new CatalogUnavailableError("catalog of system lab is not open: test");
    return temp.catalog;
  };
  const outcomes: StreamOutcome[] = [];
  const stream: QueryStreamPort = {
    limits: db.queryStream,
    open: (request, signal) =>
      openArrowScan(opened(), request, { pool: "query", signal, stepTimeoutMs: db.queryTimeoutMs }),
  };
  const handler = dbQueryStreamHandler(stream);
  await api.addSystemEndpoints("lab", {
    "db.query": dbQueryHandler({
      query: (request, format) =>
        runReadOnlyQuery(opened(), request, {
          maxRows: db.queryMaxRows,
          timeoutMs: db.queryTimeoutMs,
          format,
        }),
    }),
    "db.query.stream": {
      kind: "stream",
      serve: async (context) => {
        const outcome = await handler.serve(context);
        outcomes.push(outcome);
        return outcome;
      },
    },
  });
  return {
    nc,
    catalog: temp.catalog,
    subjects: systemSubjects("lab"),
    outcomes,
    queryJson: async (sql) =>
      JSON.parse(
        await runReadOnlyQuery(
          temp.catalog,
          { sql },
          { maxRows: 10_000_000, timeoutMs: 60_000, format: "json" },
        ),
      ) as Record<string, unknown>[],
    setOpen: (value) => {
      open = value;
    },
    async flush() {
      // The server handles the service's publishes before its PING, and queues them to the
      // client before answering the client's PING.
      await serviceNc.flush();
      await nc.flush();
    },
    async [Symbol.asyncDispose]() {
      await nc.close();
      await api[Symbol.asyncDispose]();
      await serviceNc.close();
      await temp[Symbol.asyncDispose]();
      await server[Symbol.asyncDispose]();
    },
  };
}

/** The rows of record batches as plain objects of Arrow's own JS values. */
export function batchRows(batches: readonly RecordBatch[]): Record<string, unknown>[] {
  return batches.flatMap((b) =>
    b.toArray().map((row: { toJSON(): Record<string, unknown> }) => row.toJSON()),
  );
}

/** A hand-driven stream client: sees every message as sent, acks only when told to. */
export interface RawStream {
  /** Every message received so far, in order. */
  readonly received: Msg[];
  /** Waits for message number `n` (1-based) of the stream. */
  message(n: number, timeoutMs?: number): Promise<Msg>;
  ack(seq: number): void;
  /** Publishes `body` to the ack subject as it is, well-formed or not. */
  ackBody(body: string): void;
  cancel(): void;
  /** Stops listening, as a client that went away. */
  close(): void;
}

/** `request` is sent as JSON, or as it is when it is a string (raw JSON text, bigints and all). */
export function openRawStream(nc: NatsConnection, subject: string, request: unknown): RawStream {
  const inbox = createInbox();
  const received: Msg[] = [];
  let wake: (() => void) | undefined;
  const sub = nc.subscribe(inbox, {
    callback: (_err, msg) => {
      received.push(msg);
      wake?.();
    },
  });
  nc.publish(subject, typeof request === "string" ? request : JSON.stringify(request), { reply: inbox });
  const ackSubject = () => {
    const subject = received[0]?.headers?.get(StreamHeader.Ack);
    if (!subject) throw new Error("no ack subject yet");
    return subject;
  };
  return {
    received,
    async message(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`message ${n} did not arrive (got ${received.length})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return received[n - 1]!;
    },
    ack: (seq) => nc.publish(ackSubject(), JSON.stringify({ seq })),
    ackBody: (body) => nc.publish(ackSubject(), body),
    cancel: () => nc.publish(ackSubject(), JSON.stringify({ cancel: true })),
    close: () => sub.unsubscribe(),
  };
}
