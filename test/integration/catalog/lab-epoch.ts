/**
 * Test input: an epoch built from the replies recorded in the 6-server nats-server 2.9.10
 * lab (east n1–n3, west w1–w2, leaf l1 with its own JetStream domain), and a catalog on a
 * temporary file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  openCatalog,
  runReadOnlyQuery,
  type Catalog,
  type EpochInput,
  type ScrapeReply,
} from "../../../src/catalog/index.ts";
import { DEFAULT_CHECKPOINT_BYTES, type DbConfig } from "../../../src/config/index.ts";
import { parseJsonExact } from "../../../src/lib/index.ts";
import { QueryTimeoutError } from "../../../src/domain/index.ts";
import type { CommitMarker } from "../../../src/protocol/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/scrape/lab-2.9.10");

export const LAB_SOURCES = ["varz", "jsz", "healthz"] as const;
export const LAB_SERVERS = ["l1", "n1", "n2", "n3", "w1", "w2"];

/** A reply body, typed just enough for tests to edit it. */
export interface LabBody {
  server: Record<string, unknown>;
  data: Record<string, unknown> & {
    api: Record<string, unknown>;
    account_details: { stream_detail: { name: string; config: Record<string, unknown> }[] }[];
  };
}

/** The recorded reply bodies of one source, parsed as the catalog side parses them. */
export function labBodies(source: (typeof LAB_SOURCES)[number]): unknown[] {
  return fixtureBodies(`${source}.json`);
}

/** The recorded reply bodies in a fixture file of the lab (`{bodies: [...]}`), parsed exactly. */
export function fixtureBodies(file: string): unknown[] {
  const text = readFileSync(join(FIXTURES, file), "utf8");
  return (parseJsonExact(text) as { bodies: unknown[] }).bodies;
}

/** The recorded replies of one source as the fold receives them (fixture `<source>.json`). */
export function sourceReplies(source: string): ScrapeReply[] {
  return fixtureBodies(`${source}.json`).map((body) => ({
    source,
    server: (body as { server: { name: string } }).server.name,
    body,
  }));
}

export function labReplies(): ScrapeReply[] {
  return LAB_SOURCES.flatMap((source) =>
    labBodies(source).map((body) => ({
      source,
      server: (body as { server: { name: string } }).server.name,
      body,
    })),
  );
}

export function marker(
  epoch: string,
  replies: readonly ScrapeReply[],
  overrides: Partial<CommitMarker> = {},
): CommitMarker {
  const servers = [...new Set(replies.map((r) => r.server))].sort();
  return {
    system_id: "lab",
    epoch,
    finished_at: new Date(Date.parse(epoch) + 1500).toISOString(),
    parts: replies.map((r, i) => ({ source: r.source, server: r.server, seqs: [i + 1], bytes: 1000 })),
    servers_expected: LAB_SERVERS,
    servers_answered: servers,
    unsupported: [],
    errors: [],
    ...overrides,
  };
}

/** An epoch of the lab replies (or of `replies`), committed by marker `markerSeq`. */
export function labEpoch(
  epoch: string,
  markerSeq: number,
  replies: readonly ScrapeReply[] = labReplies(),
): EpochInput {
  return { markerSeq, marker: marker(epoch, replies), replies };
}

export const TEST_DB: DbConfig = {
  retentionMs: 0,
  memoryLimit: "256MB",
  checkpointThresholdBytes: DEFAULT_CHECKPOINT_BYTES,
  threads: 2,
  queryMaxRows: 1000,
  queryTimeoutMs: 5000,
  queryStream: { maxRows: 0, window: 8, compression: "none", ackTimeoutMs: 5000 },
  memoryProfile: { enabled: false, intervalMs: 2000 },
};

/** A catalog on a fresh temporary file; disposing it closes the catalog and removes the directory. */
export async function tempCatalog(
  db: DbConfig = TEST_DB,
): Promise<{ catalog: Catalog; path: string } & AsyncDisposable> {
  const dir = await tempDir("natsmon-catalog-");
  const path = join(dir.path, "lab.duckdb");
  try {
    const catalog = await openCatalog({ path, db });
    return {
      catalog,
      path,
      async [Symbol.asyncDispose]() {
        await catalog[Symbol.asyncDispose]();
        await dir[Symbol.asyncDispose]();
      },
    };
  } catch (err) {
    await dir[Symbol.asyncDispose]();
    throw err;
  }
}

/** Rows of a query on a read connection, as plain JS values (bigints for BIGINT). */
export async function rows(catalog: Catalog, sql: string): Promise<Record<string, unknown>[]> {
  return catalog.withReader(async (con) => (await con.runAndReadAll(sql)).getRowObjectsJS());
}

/** Query results as the API returns them (JSON), parsed. */
export async function q(catalog: Catalog, sql: string): Promise<Record<string, unknown>[]> {
  const text = await runReadOnlyQuery(
    catalog,
    { sql },
    { maxRows: 10_000, timeoutMs: 10_000, format: "json" },
  );
  return JSON.parse(text) as Record<string, unknown>[];
}

export async function count(catalog: Catalog, table: string): Promise<number> {
  return (await q(catalog, `SELECT count(*) AS n FROM hx.${table}`))[0]!.n as number;
}

/** The lab replies with one body replaced (or removed, when `edit` returns undefined). */
export function editReply(
  source: string,
  server: string,
  edit: (body: LabBody) => unknown,
  replies: ScrapeReply[] = labReplies(),
): ScrapeReply[] {
  return replies.flatMap((r) => {
    if (r.source !== source || r.server !== server) return [r];
    const body = edit(structuredClone(r.body) as LabBody);
    return body === undefined ? [] : [{ ...r, body }];
  });
}

/** Every source the lab fixtures hold. */
export const ALL_LAB_SOURCES = [
  "varz",
  "jsz",
  "healthz",
  "connz",
  "routez",
  "gatewayz",
  "leafz",
  "subsz",
  "accstatz",
  "accountz",
];

/**
 * Epoch `i` of a lab system that changes over time: every source, except that CONNZ goes
 * unanswered from epoch `connzUntil` on (connections belong to the earlier epochs only),
 * and from epoch `ordersEditFrom` on the ORDERS stream's leader (n2) reports max_msgs 5,
 * so hx.stream_opts gets a second row for it.
 */
export function changingLabReplies(
  i: number,
  options: { connzUntil: number; ordersEditFrom: number },
): ScrapeReply[] {
  const replies = ALL_LAB_SOURCES.filter((s) => i < options.connzUntil || s !== "connz").flatMap((s) =>
    sourceReplies(s),
  );
  if (i < options.ordersEditFrom) return replies;
  return editReply(
    "jsz",
    "n2",
    (body) => {
      for (const s of body.data.account_details[0]!.stream_detail)
        if (s.name === "ORDERS") s.config.max_msgs = 5;
      return body;
    },
    replies,
  );
}

/**
 * A statement whose prepare takes about a second or more, whatever the machine, with little
 * memory: DuckDB folds constant expressions while preparing, here a hundred distinct
 * levenshtein() calls over 3000-character strings. Running it afterwards costs nothing.
 */
export const SLOW_PREPARE = `SELECT ${Array.from(
  { length: 100 },
  (_, i) => `levenshtein(repeat('a', 3000), repeat('b', ${3000 + i})) AS d${i}`,
).join(", ")}`;

/** Whether `err` is a 408 for a statement DuckDB was interrupted in, not one left to finish. */
export function interruptedTimeout(err: unknown): boolean {
  return (
    err instanceof QueryTimeoutError &&
    err.code === 408 &&
    err.cause instanceof Error &&
    /INTERRUPT/.test(err.cause.message)
  );
}
