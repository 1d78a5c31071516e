import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { ensureStream, findingsBucketConfig } from "../../../src/bus/index.ts";
import { findingId, type FiringFinding } from "../../../src/domain/index.ts";
import { baselineChanges, openFindingsBaseline } from "../../../src/findings/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { systemAssets } from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";

const log = silentLogger();
const T0 = new Date("2026-11-22T10:00:00.000Z");
const T1 = new Date("2026-11-22T10:01:00.000Z");

/** A firing stream finding read from n1; `server: undefined` leaves the server out. */
function entry(overrides: Partial<FiringFinding> = {}): FiringFinding {
  const e: FiringFinding = {
    code: "jetstream-008",
    entityType: "stream",
    entityPk: 7,
    entityName: "ORDERS",
    server: "n1",
    severity: "critical",
    startsAt: T0,
    ...overrides,
  };
  if (e.server !== undefined) return e;
  const { server: _, ...serverless } = e;
  return serverless;
}

function mapOf(entries: readonly FiringFinding[]): Map<string, FiringFinding> {
  return new Map(entries.map((e) => [findingId(e), e]));
}

async function ensureBucket(nc: NatsConnection, systemId: string): Promise<void> {
  await ensureStream(await jetstreamManager(nc), await findingsBucketConfig(systemId, 1));
}

/** Messages in the bucket's stream: live keys, plus any delete markers, plus the epoch key. */
async function streamMessages(
  nc: NatsConnection,
  systemId: string,
): Promise<{ messages: number; lastSeq: number }> {
  const info = await (await jetstreamManager(nc)).streams.info(`KV_${systemAssets(systemId).findingsBucket}`);
  return { messages: info.state.messages, lastSeq: info.state.last_seq };
}

describe("the findings baseline in a KV bucket on a real nats-server", () => {
  let server: TestServer;
  let nc: NatsConnection;

  before(async () => {
    server = await startTestServer("kv1");
    nc = await connect({ servers: server.url });
  });
  after(async () => {
    await nc.close();
    await server[Symbol.asyncDispose]();
  });

  test("the bucket is created idempotently from streams/ and is a KV bucket with one value per key", async () => {
    await ensureBucket(nc, "idem");
    await ensureBucket(nc, "idem");
    const status = await (await new Kvm(nc).open("MON_FINDINGS_idem")).status();
    assert.equal(status.bucket, "MON_FINDINGS_idem");
    assert.equal(status.history, 1);
    assert.equal(status.values, 0);
  });

  test("opening a bucket that was never created fails", async () => {
    await assert.rejects(openFindingsBaseline(nc, "missing", log), /stream not found/);
  });

  test("an empty bucket loads as never saved", async () => {
    await ensureBucket(nc, "empty");
    const store = await openFindingsBaseline(nc, "empty", log);
    assert.deepEqual(await store.load(), {
      saved: false,
      epoch: undefined,
      catalogId: undefined,
      findings: new Map(),
      held: new Map(),
      transitions: undefined,
    });
  });

  test("a saved baseline loads back the same on a new connection, with readable keys", async () => {
    await ensureBucket(nc, "trip");
    const entries = [
      entry(),
      entry({
        entityType: "stream_replica",
        entityKey: "n1",
        entityName: "ORDERS on n1",
        severity: "warning",
      }),
      entry({ code: "server-007", entityType: "server", entityPk: 1, entityName: "n1", server: undefined }),
      entry({ entityPk: 9, entityKey: "a key.with dots/and ü" }),
      entry({ entityPk: 10, entityKey: "" }),
    ];
    const store = await openFindingsBaseline(nc, "trip", log);
    await store.save(T1, baselineChanges(new Map(), mapOf(entries)));

    const other = await connect({ servers: server.url });
    try {
      const loaded = await (await openFindingsBaseline(other, "trip", log)).load();
      assert.deepEqual(loaded, {
        saved: true,
        epoch: T1,
        catalogId: undefined,
        findings: mapOf(entries),
        held: new Map(),
        transitions: undefined,
      });
      const keys: string[] = [];
      for await (const key of await (await new Kvm(other).open("MON_FINDINGS_trip")).keys()) keys.push(key);
      assert.deepEqual(keys.sort(), [
        "epoch",
        "f.jetstream-008.stream.10.=",
        "f.jetstream-008.stream.7",
        `f.jetstream-008.stream.9.=${Buffer.from("a key.with dots/and ü").toString("base64url")}`,
        "f.jetstream-008.stream_replica.7.n1",
        "f.server-007.server.1",
      ]);
    } finally {
      await other.close();
    }
  });

  test("saving writes only the changed entries and the epoch; resolved keys leave nothing once reloaded", async () => {
    await ensureBucket(nc, "delta");
    const store = await openFindingsBaseline(nc, "delta", log);
    const first = mapOf([entry({ entityPk: 1 }), entry({ entityPk: 2 }), entry({ entityPk: 3 })]);
    await store.save(T0, baselineChanges(new Map(), first));
    assert.deepEqual(await streamMessages(nc, "delta"), { messages: 4, lastSeq: 4 });

    // pk 1 stays, pk 2 changes severity, pk 3 resolves, pk 4 fires.
    const second = mapOf([
      entry({ entityPk: 1 }),
      entry({ entityPk: 2, severity: "warning" }),
      entry({ entityPk: 4, startsAt: T1 }),
    ]);
    await store.save(T1, baselineChanges(first, second));
    // Three writes (put 2, put 4, delete 3) and the epoch; pk 1 was not written again.
    assert.equal((await streamMessages(nc, "delta")).lastSeq, 8);

    const loaded = await store.load();
    assert.deepEqual(loaded, {
      saved: true,
      epoch: T1,
      catalogId: undefined,
      findings: second,
      held: new Map(),
      transitions: undefined,
    });
    // The load purged the delete marker of pk 3: three findings and the epoch remain.
    assert.equal((await streamMessages(nc, "delta")).messages, 4);
    assert.deepEqual((await store.load()).findings, second);
  });

  test("a bucket that holds only delete markers loads as never saved", async () => {
    await ensureBucket(nc, "markers");
    const kv = await new Kvm(nc).open("MON_FINDINGS_markers");
    await kv.put("f.server-007.server.1", "{}");
    await kv.delete("f.server-007.server.1");
    const loaded = await (await openFindingsBaseline(nc, "markers", log)).load();
    assert.deepEqual(loaded, {
      saved: false,
      epoch: undefined,
      catalogId: undefined,
      findings: new Map(),
      held: new Map(),
      transitions: undefined,
    });
    assert.equal((await streamMessages(nc, "markers")).messages, 0);
  });

  test("an unreadable entry is left out and the rest loads", async () => {
    await ensureBucket(nc, "bad");
    const store = await openFindingsBaseline(nc, "bad", log);
    await store.save(T0, baselineChanges(new Map(), mapOf([entry()])));
    const kv = await new Kvm(nc).open("MON_FINDINGS_bad");
    await kv.put("f.server-007.server.1", "not json");
    await kv.put("f.server-007.server.2", JSON.stringify({ code: "server-007", severity: "fatal" }));
    assert.deepEqual((await store.load()).findings, mapOf([entry()]));
  });

  test("the baseline survives a restart of the server", async () => {
    await ensureBucket(nc, "restart");
    const entries = [entry(), entry({ entityPk: 8, severity: "info" })];
    await (
      await openFindingsBaseline(nc, "restart", log)
    ).save(T1, baselineChanges(new Map(), mapOf(entries)));
    await nc.close();
    await server.restart();
    nc = await connect({ servers: server.url });
    const loaded = await (await openFindingsBaseline(nc, "restart", log)).load();
    assert.deepEqual(loaded, {
      saved: true,
      epoch: T1,
      catalogId: undefined,
      findings: mapOf(entries),
      held: new Map(),
      transitions: undefined,
    });
  });

  test("thousands of keys save and load whole", async () => {
    await ensureBucket(nc, "many");
    const n = 5000;
    const entries = Array.from({ length: n }, (_, i) =>
      entry({
        code: `server-${String(i % 19).padStart(3, "0")}`,
        entityType: "connection",
        entityPk: i,
        entityName: `connection ${i}`,
        severity: i % 3 === 0 ? "critical" : "warning",
      }),
    );
    const store = await openFindingsBaseline(nc, "many", log);
    let t = performance.now();
    await store.save(T1, baselineChanges(new Map(), mapOf(entries)));
    const saveMs = performance.now() - t;

    const other = await connect({ servers: server.url });
    try {
      const fresh = await openFindingsBaseline(other, "many", log);
      t = performance.now();
      const loaded = await fresh.load();
      const loadMs = performance.now() - t;
      assert.equal(loaded.findings.size, n);
      assert.deepEqual(loaded.findings, mapOf(entries));
      // A figure for the report, not a threshold.
      console.log(
        `findings baseline: saved ${n} keys in ${Math.round(saveMs)} ms, loaded in ${Math.round(loadMs)} ms`,
      );
    } finally {
      await other.close();
    }
  });
});
