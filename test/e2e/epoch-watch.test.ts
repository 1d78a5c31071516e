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
