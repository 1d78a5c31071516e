/**
 * An endpoint added at a restart is not told about a finding that cleared while natsmon was
 * down (README: "A new endpoint starts with what is firing now"): its first delivery waits for
 * the first epoch diffed since the start, not the firing set of the baseline saved before the
 * stop. A real monitored nats-server has two streams at their message limit (jetstream-003
 * fires for both); natsmon stops, one stream is purged, natsmon starts again with a new webhook
 * endpoint. The new endpoint gets the stream still full and nothing of the purged one, though
 * epochs scraped before the purge wait unfolded in the scrape stream at the restart; the
 * endpoint that was there before gets the purged stream's resolve, as before.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { WebhookMessage } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "fresh";
const FIRING_SQL = "SELECT count(*) AS n FROM hx.findings_firing WHERE code = 'jetstream-003'";
const CHECK_RUNS_SQL = "SELECT count(*) AS n FROM hx.check_runs";

/** The jetstream-003 alerts a path got, as `<status> <stream>` (the entity name ends with the stream's). */
const alertsAt = (receiver: HttpReceiver, path: string) =>
  receiver.requests
    .filter((r) => r.path === path)
    .flatMap((r) => (r.json() as WebhookMessage).alerts)
    .filter((a) => a.labels.alertname === "jetstream-003")
    .map(
      (a) =>
        `${a.status} ${/(GONE|KEPT)$/.exec(a.annotations.entity_name ?? "")?.[1] ?? a.annotations.entity_name}`,
    );

const count = async (nc: NatsConnection, sql: string) =>
  (await sqlQuery<{ n: number }>(nc, SYSTEM, sql))[0]!.n;

test("a new endpoint is not told of a finding that cleared while natsmon was down", async () => {
  await using monitored = await startTestServer("fresh-mon");
  await using dir = await tempDir();
  await using receiver = await startHttpReceiver();
  const hook = (name: string) =>
    `{name: ${name}, url: ${JSON.stringify(`${receiver.url}/${name}`)}, subscriptions: ["jetstream-003"]}`;
  const run = async (hooks: readonly string[], roles = "[scrape, catalog]") => {
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        "system:",
        `  id: ${SYSTEM}`,
        `  roles: ${roles}`,
        `  nats: {url: ${JSON.stringify(monitored.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        "scraper: {interval: 1s}",
        "notifications:",
        `  webhook: [${hooks.join(", ")}]`,
      ].join("\n"),
    );
    const node = spawnNatsmon(["run", "--config", config]);
    return { node, nc: await connect({ servers: await node.waitForUrl() }) };
  };
  const app = await connect({ servers: monitored.url, user: APP_USER.user, pass: APP_USER.password });
  try {
    // Two streams at their message limit: jetstream-003 fires for both.
    const jsm = await jetstreamManager(app);
    const js = jetstream(app);
    for (const name of ["GONE", "KEPT"]) {
      await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], max_msgs: 10 });
      for (let i = 0; i < 10; i++) await js.publish(`${name.toLowerCase()}.${i}`, "x");
    }

    const first = await run([hook("old")]);
    try {
      await waitFor(async () => (await count(first.nc, FIRING_SQL)) === 2, {
        timeoutMs: 60_000,
        message: "jetstream-003 firing for both streams",
      });
      await waitFor(() => alertsAt(receiver, "/old").length === 2, {
        timeoutMs: 30_000,
        message: "both firing alerts at the endpoint that was there first",
      });
    } finally {
      await first.nc.close();
      await first.node.kill("SIGTERM");
    }

    // Epochs scraped before the finding clears and not folded before the stop (a catalog
    // behind its scraper): folded as a backlog after the restart, they tell nothing of now.
    const scraper = await run([hook("old")], "[scrape]");
    try {
      const sinkJsm = await jetstreamManager(scraper.nc);
      const stream = `MON_SCRAPE_${SYSTEM}`;
      const from = (await sinkJsm.streams.info(stream)).state.last_seq;
      await waitFor(async () => (await sinkJsm.streams.info(stream)).state.last_seq >= from + 20, {
        timeoutMs: 30_000,
        message: "epochs scraped with no catalog folding them",
      });
    } finally {
      await scraper.nc.close();
      await scraper.node.kill("SIGTERM");
    }

    // While natsmon is down one finding clears.
    await jsm.streams.purge("GONE");

    const second = await run([hook("old"), hook("new")]);
    try {
      await waitFor(() => alertsAt(receiver, "/new").includes("firing KEPT"), {
        timeoutMs: 60_000,
        message: "the finding still firing at the new endpoint",
      });
      // The endpoint with delivered state gets the resolve, as before.
      await waitFor(() => alertsAt(receiver, "/old").includes("resolved GONE"), {
        timeoutMs: 30_000,
        message: "the resolve of the cleared finding at the old endpoint",
      });
      // Two more epochs diffed: anything the new endpoint was to get about GONE has come.
      const runs = await count(second.nc, CHECK_RUNS_SQL);
      await waitFor(async () => (await count(second.nc, CHECK_RUNS_SQL)) >= runs + 2, {
        timeoutMs: 30_000,
        message: "two more checked epochs",
      });
      assert.equal(await count(second.nc, FIRING_SQL), 1, "only KEPT fires");
      assert.deepEqual(alertsAt(receiver, "/new"), ["firing KEPT"], "nothing of GONE, firing or resolved");
      assert.deepEqual(alertsAt(receiver, "/old").sort(), ["firing GONE", "firing KEPT", "resolved GONE"]);
    } catch (err) {
      process.stderr.write(second.node.stderr());
      throw err;
    } finally {
      await second.nc.close();
      await second.node.kill("SIGTERM");
    }
  } finally {
    await app.close();
  }
});
