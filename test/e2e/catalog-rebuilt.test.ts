/**
 * A catalog rebuilt in place (its file deleted, the sink and its findings baseline kept) numbers
 * its entities anew. Baseline rule 2: its first epoch establishes the baseline and publishes
 * nothing, so what was firing and still is neither resolves nor fires again on the feed, and
 * keeps its start.
 */
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed } from "../harness/finding-feed.ts";
import { spawnLocalNode } from "../harness/local-node.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

interface Firing {
  code: string;
  entity_name: string;
  entity_pk: number;
  starts_at: string;
}

const FIRING_SQL = `SELECT code, entity_name, entity_ref AS entity_pk,
  strftime(starts_at, '%Y-%m-%dT%H:%M:%S.%f') AS starts_at FROM hx.findings_firing ORDER BY ALL`;
/** jetstream-002 fires for every stream holding a subject. */
const YAML = ["check-thresholds: {jetstream-002: {p_max_subjects: 1}}"];

async function checkedEpochs(nc: NatsConnection, more: number): Promise<void> {
  const runs = async () =>
    (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;
  const start = await waitFor(() => runs().catch(() => undefined), { message: "the catalog open" });
  await waitFor(async () => (await runs()) >= start + more, {
    timeoutMs: 60_000,
    message: `${more} more checked epochs`,
  });
}

const nameOf = (f: { code: string; entity_name: string }) => `${f.code} ${f.entity_name}`;

test("a catalog file rebuilt beside its findings baseline publishes nothing for findings still up, and keeps their starts", async () => {
  await using dir = await tempDir();
  let before: Firing[];
  {
    const { node, nc } = await spawnLocalNode(dir.path, YAML);
    try {
      const jsm = await jetstreamManager(nc);
      await checkedEpochs(nc, 1);
      // Streams seen once and deleted use up pks, so TARGET's pk here is one the rebuilt
      // catalog, which never sees them, does not give it.
      for (const name of ["GONE1", "GONE2", "GONE3"])
        await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`] });
      await checkedEpochs(nc, 2);
      for (const name of ["GONE1", "GONE2", "GONE3"]) await jsm.streams.delete(name);
      await jsm.streams.add({ name: "TARGET", subjects: ["target.>"] });
      await jetstream(nc).publish("target.one", "x");
      await checkedEpochs(nc, 3);
      before = await sqlQuery<Firing>(nc, "local", FIRING_SQL);
    } finally {
      await nc.close();
      await node.kill("SIGTERM");
    }
  }
  const target = before.find((f) => f.code === "jetstream-002" && f.entity_name.endsWith("/TARGET"));
  assert.ok(target, JSON.stringify(before));

  await rm(join(dir.path, "data", "local.duckdb"));
  await rm(join(dir.path, "data", "local.duckdb.wal"), { force: true });

  const { node, nc } = await spawnLocalNode(dir.path, YAML);
  try {
    await using feed = subscribeFindingFeed(nc, "local");
    await checkedEpochs(nc, 3);
    const after = await sqlQuery<Firing>(nc, "local", FIRING_SQL);
    const movedTarget = after.find((f) => nameOf(f) === nameOf(target));
    assert.ok(movedTarget, JSON.stringify(after));
    assert.notEqual(movedTarget.entity_pk, target.entity_pk, "the rebuilt catalog numbers TARGET anew");
    const was = new Set(before.map(nameOf));
    const again = feed.received.filter((r) => was.has(nameOf(r.transition)));
    assert.deepEqual(again, [], "nothing that was firing is published again");
    // Every finding still up keeps the start it had in the old file.
    const starts = (fs: Firing[]) =>
      fs.filter((f) => was.has(nameOf(f))).map((f) => [nameOf(f), f.starts_at]);
    const kept = new Set(after.map(nameOf));
    assert.deepEqual(starts(after), starts(before.filter((f) => kept.has(nameOf(f)))));
  } finally {
    await nc.close();
    await node.kill("SIGTERM");
  }
});
