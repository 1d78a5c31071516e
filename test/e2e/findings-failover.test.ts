/**
 * Finding transitions across a catalog's crash and across the catalog role moving to a catalog
 * file of another node, on a real nats-server that is both the sink (so the findings baseline,
 * the scrape stream and the feed subscriber outlive natsmon) and the monitored system.
 *
 * A: the findings baseline is per system, entity pks per catalog file. A catalog with check runs
 * of its own that takes over a baseline another catalog wrote matches it by entity name: what
 * stays up neither fires again nor resolves, and keeps its start.
 * B: a node killed once it saved an epoch's baseline, before it published the epoch's
 * transitions: when the marker comes back, the transitions saved with the baseline are published.
 */
import assert from "node:assert/strict";
import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { findingKeyTokens } from "../../src/domain/index.ts";
import {
  systemAssets,
  systemSubject,
  type FindingBaselineEntry,
  type FindingBaselineEpoch,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { APP_USER, SYS_USER, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "local";

interface Firing {
  code: string;
  entity_name: string;
  entity_pk: number;
  starts_at: string;
}

const FIRING_SQL = `SELECT code, entity_name, entity_ref AS entity_pk,
  strftime(starts_at, '%Y-%m-%dT%H:%M:%S.%f') AS starts_at FROM hx.findings_firing ORDER BY ALL`;

/** A node holding both roles of system `local`, which is the sink server itself. */
async function startNode(
  dir: string,
  sink: TestServer,
  env: Record<string, string> = {},
): Promise<NatsmonProcess> {
  const file = join(dir, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {id: n1, data-dir: ${JSON.stringify(join(dir, "data"))}}`,
      `sink: {url: ${JSON.stringify(sink.url)}}`,
      "system:",
      `  id: ${SYSTEM}`,
      `  nats: {url: ${JSON.stringify(sink.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      // jetstream-002 fires for every stream holding a subject.
      "  check-thresholds: {jetstream-002: {p_max_subjects: 1}}",
      "scraper: {interval: 1s}",
    ].join("\n"),
  );
  return spawnNatsmon(["run", "--config", file], env);
}

async function checkedEpochs(bus: NatsConnection, more: number): Promise<void> {
  const runs = async () =>
    (await sqlQuery<{ n: number }>(bus, SYSTEM, "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;
  const start = await waitFor(() => runs().catch(() => undefined), {
    timeoutMs: 60_000,
    message: "the catalog open",
  });
  await waitFor(async () => (await runs()) >= start + more, {
    timeoutMs: 60_000,
    message: `${more} more checked epochs`,
  });
}

async function stopNode(node: NatsmonProcess): Promise<void> {
  assert.equal(await node.kill("SIGTERM"), 0, node.stderr().slice(-3000));
}

const nameOf = (f: { code: string; entity_name: string }) => `${f.code} ${f.entity_name}`;

test("a catalog with check runs of its own that takes over another catalog's baseline matches it by name: nothing still up fires again or resolves", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("failover-a");
  const bus = await connect({ servers: sink.url });
  const app = await connect({ servers: sink.url, user: APP_USER.user, pass: APP_USER.password });
  const catalogFile = join(dir.path, "data", `${SYSTEM}.duckdb`);
  const swap = async (from: string, to: string) => {
    await rename(from, to);
    await rm(`${from}.wal`, { force: true });
  };
  try {
    const jsm = await jetstreamManager(app);
    // Catalog one sees three streams, then TARGET, so it numbers TARGET after them.
    let node = await startNode(dir.path, sink);
    await checkedEpochs(bus, 1);
    for (const name of ["GONE1", "GONE2", "GONE3"])
      await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`] });
    await checkedEpochs(bus, 2);
    for (const name of ["GONE1", "GONE2", "GONE3"]) await jsm.streams.delete(name);
    await jsm.streams.add({ name: "TARGET", subjects: ["target.>"] });
    await jetstream(app).publish("target.one", "x");
    await checkedEpochs(bus, 3);
    await stopNode(node);
    await swap(catalogFile, join(dir.path, "one.duckdb"));

    // Catalog two (another node's file) never sees the three: TARGET gets another pk there.
    // It writes the baseline from here on.
    node = await startNode(dir.path, sink);
    await checkedEpochs(bus, 4);
    const before = await sqlQuery<Firing>(bus, SYSTEM, FIRING_SQL);
    await stopNode(node);
    await swap(catalogFile, join(dir.path, "two.duckdb"));

    // The role moves back to catalog one, which has check runs of its own.
    await swap(join(dir.path, "one.duckdb"), catalogFile);
    await using feed = subscribeFindingFeed(bus, SYSTEM);
    node = await startNode(dir.path, sink);
    try {
      await checkedEpochs(bus, 4);
      const after = await sqlQuery<Firing>(bus, SYSTEM, FIRING_SQL);
      const streams = (fs: Firing[]) => fs.filter((f) => f.code === "jetstream-002");
      const target = (fs: Firing[]) => streams(fs).find((f) => f.entity_name.endsWith("/TARGET"));
      assert.ok(target(before) && target(after), JSON.stringify({ before, after }));
      assert.notEqual(
        target(after)!.entity_pk,
        target(before)!.entity_pk,
        "the two catalogs number TARGET apart",
      );

      // One row per finding: a finding is not listed under both catalogs' pks.
      const names = streams(after).map(nameOf);
      assert.deepEqual(names, [...new Set(names)], JSON.stringify(after));
      // What was up under catalog two and still is published nothing (no second firing, no
      // resolve then firing), and keeps its start.
      const stillUp = new Set(streams(after).map(nameOf));
      const was = streams(before).filter((f) => stillUp.has(nameOf(f)));
      assert.ok(was.some((f) => f.entity_name.endsWith("/TARGET")));
      const wasNames = new Set(was.map(nameOf));
      assert.deepEqual(
        feed.received.filter((r) => wasNames.has(nameOf(r.transition))).map((r) => r.subject),
        [],
        "nothing still up is published again",
      );
      const starts = (fs: Firing[]) =>
        fs.filter((f) => wasNames.has(nameOf(f))).map((f) => [nameOf(f), f.starts_at]);
      assert.deepEqual(starts(streams(after)), starts(was));
    } finally {
      await stopNode(node);
    }
  } finally {
    await app.close();
    await bus.close();
  }
});

test("a node killed after saving an epoch's findings baseline, before publishing its transitions, publishes them when the marker comes back", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("failover-b");
  const bus = await connect({ servers: sink.url });
  const app = await connect({ servers: sink.url, user: APP_USER.user, pass: APP_USER.password });
  try {
    await using feed = subscribeFindingFeed(bus, SYSTEM);
    const ids: string[] = [];
    const raw = bus.subscribe(systemSubject(SYSTEM, "feed.finding.>"), {
      callback: (err, msg) => {
        if (!err) ids.push(msg.headers?.get("Nats-Msg-Id") ?? "");
      },
    });
    const crashing = await startNode(dir.path, sink, { NATSMON_FAULT: "after-baseline-save" });
    await checkedEpochs(bus, 1);
    // A stream holding a subject fires jetstream-002: an epoch with transitions, if none came before.
    await jetstreamManager(app).then((jsm) => jsm.streams.add({ name: "TARGET", subjects: ["target.>"] }));
    await jetstream(app).publish("target.one", "x");
    assert.equal(await crashing.exited, "SIGKILL", crashing.stderr().slice(-3000));

    // What the killed node saved: the baseline of epoch E, with the findings that started at E.
    const kv = await new Kvm(bus).open(systemAssets(SYSTEM).findingsBucket);
    const stamp = (await kv.get("epoch"))!.json<FindingBaselineEpoch>();
    const started: FindingBaselineEntry[] = [];
    for await (const key of await kv.keys("f.>")) {
      const entry = (await kv.get(key))?.json<FindingBaselineEntry>();
      if (entry && Date.parse(entry.starts_at) === Date.parse(stamp.epoch)) started.push(entry);
    }
    assert.ok(started.length > 0, "the killed epoch saved findings that started with it");
    const keyOf = (f: { code: string; entity_pk: number; entity_key?: string }) =>
      `${f.code} ${f.entity_pk} ${f.entity_key ?? ""}`;
    const isStarted = (t: {
      status: string;
      code: string;
      entity_pk: number;
      entity_key?: string;
      starts_at: string;
    }) =>
      t.status === "firing" &&
      Date.parse(t.starts_at) === Date.parse(stamp.epoch) &&
      started.some((f) => keyOf(f) === keyOf(t));
    assert.deepEqual(
      feed.received.filter((r) => isStarted(r.transition)),
      [],
      "the killed node published none of them",
    );

    const node = await startNode(dir.path, sink);
    try {
      await waitFor(
        () =>
          started.every((f) =>
            feed.received.some((r) => isStarted(r.transition) && keyOf(r.transition) === keyOf(f)),
          ),
        {
          timeoutMs: 90_000,
          intervalMs: 200,
          message: "the killed epoch's firings on the feed after the restart",
        },
      );
      // Each carries the id its first publication would have had: system, epoch and finding.
      for (const f of started) {
        const tokens = findingKeyTokens({
          code: f.code,
          entityType: f.entity_type,
          entityPk: f.entity_pk,
          ...(f.entity_key === undefined ? {} : { entityKey: f.entity_key }),
        });
        assert.ok(
          ids.includes(`${SYSTEM}|${new Date(stamp.epoch).toISOString()}|${tokens.join(".")}`),
          JSON.stringify(ids),
        );
      }
    } finally {
      raw.unsubscribe();
      await stopNode(node);
    }
  } finally {
    await app.close();
    await bus.close();
  }
});
