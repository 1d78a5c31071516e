/**
 * A catalog-only node whose scraper never writes (no scrape node for its system): it says
 * so once three scrape intervals pass without an epoch, and says so again when epochs come.
 * Without it, such a node folded nothing, ran no check and logged nothing at all.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { consumeCommits } from "../../src/bus/index.ts";
import { systemSubjects, type CommitMarker } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

test("a catalog node with no epoch for three scrape intervals says so, and says when they come again", async () => {
  await using dir = await tempDir();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: cat, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "system: {id: quiet, roles: [catalog]}",
      "scraper: {interval: 1s}",
      "",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const log = () => node.stdout() + node.stderr();
  await waitFor(() => /no epoch has come from the scraper for 3 scrape intervals/.test(log()), {
    timeoutMs: 30_000,
    message: "the warning about a quiet scraper",
  }).catch((err: unknown) => {
    throw new Error(`${String(err)}; its log:\n${log()}`);
  });
  assert.equal(log().match(/no epoch has come from the scraper/g)?.length, 1, "said once, not every look");

  // An epoch arrives (as a scrape node would write it).
  const nc = await connect({ servers: url });
  try {
    const epoch = new Date().toISOString();
    const marker: CommitMarker = {
      system_id: "quiet",
      epoch,
      finished_at: epoch,
      parts: [],
      servers_expected: [],
      servers_answered: [],
      unsupported: [],
      errors: [],
    };
    await jetstream(nc).publish(systemSubjects("quiet").scrapeCommit, JSON.stringify(marker));
    await waitFor(() => /epochs come from the scraper again/.test(log()), {
      timeoutMs: 30_000,
      message: "the all-clear once an epoch came",
    });
  } finally {
    await nc.close();
  }
});

test("a catalog node whose markers another process takes from its consumer names that process, not the scraper", async () => {
  await using dir = await tempDir();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: cat, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "system: {id: shared, roles: [catalog]}",
      "scraper: {interval: 1s}",
      "",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const log = () => node.stdout() + node.stderr();
  // Its watch has begun, and gone quiet: the first marker ends the quiet.
  await waitFor(() => /no epoch has come from the scraper/.test(log()), {
    timeoutMs: 30_000,
    message: "the catalog's watch quiet",
  });
  const nc = await connect({ servers: url });
  const marker = (): string => {
    const epoch = new Date().toISOString();
    const m: CommitMarker = {
      system_id: "shared",
      epoch,
      finished_at: epoch,
      parts: [],
      servers_expected: [],
      servers_answered: [],
      unsupported: [],
      errors: [],
    };
    return JSON.stringify(m);
  };
  const js = jetstream(nc);
  await js.publish(systemSubjects("shared").scrapeCommit, marker());
  await waitFor(() => /epochs come from the scraper again/.test(log()), {
    timeoutMs: 30_000,
    message: "the catalog's own marker",
  });
  // Another process pulling from the catalog's durable consumer (a catalog of a natsmon release
  // without role claims), which takes a marker and holds it unacked: with one marker in flight
  // at a time, the consumer hands this catalog nothing meanwhile.
  const other = await consumeCommits(nc, "shared", { ackWaitMs: 120_000 });
  try {
    const taken = (async () => {
      for await (const delivery of other.commits) return delivery.seq;
      return undefined;
    })();
    // Published until the other process has one (the catalog may get the first ones).
    let got: number | undefined;
    void taken.then((seq) => (got = seq));
    await waitFor(
      async () => {
        if (got === undefined) await js.publish(systemSubjects("shared").scrapeCommit, marker());
        return got !== undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, message: "a marker taken by the other process" },
    );
    // The scraper goes on writing: its next marker waits behind the one the other process holds.
    await js.publish(systemSubjects("shared").scrapeCommit, marker());
    await waitFor(() => /A second catalog node for this system/.test(log()), {
      timeoutMs: 30_000,
      message: "the warning naming another process",
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}; its log:\n${log()}`);
    });
    assert.match(log(), /"cause":"taken-elsewhere"/);
  } finally {
    await other.stop();
    await nc.close();
  }
});
