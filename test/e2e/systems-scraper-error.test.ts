/**
 * `natsmon systems` and `$MON.ping` say when a node's scraper does not scrape: a node whose
 * system-account password is wrong keeps retrying, and the listing names why, rather than
 * "ok" beside a scraper whose ops.scraper.status answers 503.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { discoverNodes } from "../../src/bus/index.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { startTestServer, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

test("a scraper that cannot connect is named in $MON.ping and natsmon systems; a working one is ok", async () => {
  await using dir = await tempDir();
  await using monitored = await startTestServer("scraper-error");
  const write = async (name: string, password: string) => {
    const path = join(dir.path, `${name}.yaml`);
    await writeFile(
      path,
      [
        `node: {id: ${name}, data-dir: ${JSON.stringify(join(dir.path, name))}}`,
        "sink: {embedded: {port: -1}}",
        `system: {id: ${name}, nats: {url: ${JSON.stringify(monitored.url)}, user: ${SYS_USER.user}, password: ${password}}}`,
        "",
      ].join("\n"),
    );
    return path;
  };
  await using bad = spawnNatsmon(["run", "--config", await write("bad", "wrong")]);
  const url = await bad.waitForUrl();
  const nc = await connect({ servers: url });
  try {
    const entry = await waitFor(
      async () => {
        const system = (await discoverNodes(nc, 500)).find((r) => r.node_id === "bad")?.systems[0];
        return system?.scraper_error !== undefined && system;
      },
      { timeoutMs: 30_000, message: "the node's discovery reply naming its scraper's problem" },
    );
    assert.match(
      entry.scraper_error ?? "",
      /cannot connect to the monitored system at .*Authorization Violation/i,
    );
    const listed = await runNatsmon(["systems", "--server", url]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /scraper error: cannot connect to the monitored system at /);
    assert.doesNotMatch(listed.stdout, /\bok\b/);
  } finally {
    await nc.close();
  }

  await using good = spawnNatsmon(["run", "--config", await write("good", SYS_USER.password)]);
  const goodUrl = await good.waitForUrl();
  const goodNc = await connect({ servers: goodUrl });
  try {
    // Once its first epoch is committed the scraper works: nothing to report.
    const entry = await waitFor(
      async () => {
        const system = (await discoverNodes(goodNc, 500)).find((r) => r.node_id === "good")?.systems[0];
        return (
          system && (await runNatsmon(["systems", "--server", goodUrl])).stdout.includes(" ok") && system
        );
      },
      { timeoutMs: 60_000, message: "the working node listed ok" },
    );
    assert.equal(entry.scraper_error, undefined);
  } finally {
    await goodNc.close();
  }
});
