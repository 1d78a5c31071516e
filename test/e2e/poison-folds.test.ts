import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { nodeSubjects, systemSubjects, type CommitMarker } from "../../src/protocol/index.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

const subjects = systemSubjects("local");

/** A recent epoch (an old one would be removed by retention right after its fold), `s` seconds apart. */
function epochAt(secondsAgo: number): string {
  return new Date(Date.now() - secondsAgo * 1000).toISOString();
}

function markerOf(epoch: string, parts: CommitMarker["parts"], servers: string[]): CommitMarker {
  return {
    system_id: "local",
    epoch,
    finished_at: epoch,
    parts,
    servers_expected: servers,
    servers_answered: servers,
    unsupported: [],
    errors: [],
  };
}

async function startNode(): Promise<{ node: NatsmonProcess; nc: NatsConnection } & AsyncDisposable> {
  const dir = await tempDir();
  const node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_SCRAPER_INTERVAL: "1h",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  return {
    node,
    nc,
    async [Symbol.asyncDispose]() {
      await nc.close();
      await node[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

function query<T>(nc: NatsConnection, sql: string): Promise<T[]> {
  return nc.request(subjects.dbQuery, JSON.stringify({ sql }), { timeout: 5000 }).then((m) => m.json<T[]>());
}

test("a CONNZ connection whose cid is not a number is left out, the loss recorded, and later epochs fold", async () => {
  await using t = await startNode();
  const js = jetstream(t.nc);
  const reply = {
    server: { name: "fake", id: "NFAKE", ver: "2.9.10" },
    data: {
      num_connections: 2,
      connections: [
        {
          cid: "abc",
          kind: "Client",
          ip: "10.0.0.1",
          port: 4222,
          start: "2026-11-27T00:00:00Z",
          account: "APP",
        },
        { cid: 5, kind: "Client", ip: "10.0.0.2", port: 4222, start: "2026-11-27T00:00:00Z", account: "APP" },
      ],
    },
  };
  const body = JSON.stringify(reply);
  const part = await js.publish(subjects.scrapePart("connz"), body);
  const epoch = epochAt(60);
  const parts = [{ source: "connz", server: "fake", seqs: [part.seq], bytes: body.length }];
  await js.publish(subjects.scrapeCommit, JSON.stringify(markerOf(epoch, parts, ["fake"])));
  const later = epochAt(50);
  await js.publish(subjects.scrapeCommit, JSON.stringify(markerOf(later, [], ["fake"])));

  const row = await waitFor(
    async () =>
      (
        await query<{ errors: string[] }>(
          t.nc,
          `SELECT errors FROM hx.epochs WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
        )
      )[0],
    { message: "the epoch with the malformed connection to be folded" },
  );
  assert.ok(
    row.errors.some((e) =>
      /connection abc on fake: hx\.connection_ident\.cid: "abc" is not a BIGINT; left out/.test(e),
    ),
    JSON.stringify(row),
  );
  // The well-formed connection of the same reply is there.
  const cids = await query<{ cid: number }>(t.nc, "SELECT cid::INTEGER AS cid FROM hx.connection_ident");
  assert.deepEqual(cids, [{ cid: 5 }]);
  await waitFor(
    async () =>
      (await query(t.nc, `SELECT 1 FROM hx.epochs WHERE epoch = '${later}'::TIMESTAMPTZ`)).length === 1,
    { message: "the next epoch to be folded" },
  );
});

test("a marker whose fold keeps failing on its own data is set aside after 3 attempts, and ingest goes on", async () => {
  await using t = await startNode();
  const js = jetstream(t.nc);
  // system_id must be text: the epoch row cannot be written, on any attempt.
  const bad = epochAt(60);
  const poisoned = { ...markerOf(bad, [], ["ghost"]), system_id: 42 };
  const ack = await js.publish(subjects.scrapeCommit, JSON.stringify(poisoned));
  const later = epochAt(50);
  await js.publish(subjects.scrapeCommit, JSON.stringify(markerOf(later, [], ["ghost"])));

  await waitFor(
    async () =>
      (await query(t.nc, `SELECT 1 FROM hx.epochs WHERE epoch = '${later}'::TIMESTAMPTZ`)).length === 1,
    { message: "the epoch after the poisoned marker to be folded", timeoutMs: 60_000 },
  );
  assert.equal((await query(t.nc, `SELECT 1 FROM hx.epochs WHERE epoch = '${bad}'::TIMESTAMPTZ`)).length, 0);
  // The log is JSON lines on stderr.
  const lines = jsonLogLines<{ msg: string; epoch?: string; seq?: number; attempt?: number; error?: string }>(
    t.node.stderr(),
  );
  const attempts = lines.filter((l) => l.epoch === bad && /its own data makes the fold fail/.test(l.msg));
  assert.deepEqual(
    attempts.map((l) => l.attempt),
    [1, 2],
  );
  const setAside = lines.find((l) => l.epoch === bad && l.msg.startsWith("epoch set aside"));
  assert.ok(setAside, JSON.stringify(lines.filter((l) => l.epoch === bad)));
  assert.equal(setAside.seq, ack.seq);
  assert.match(setAside.error!, /system_id/);
  assert.match(setAside.msg, /nats stream get/);
  const metrics = (await t.nc.request(nodeSubjects("local").opsMetrics, "", { timeout: 10_000 })).string();
  assert.match(
    metrics,
    /natsmon_commit_markers_set_aside_total\{[^}]*reason="data-error"[^}]*\} 1\b/,
    metrics,
  );
});
