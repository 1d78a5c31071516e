import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import {
  systemSubjects,
  type DisconnectBucket,
  type DisconnectHistoryReply,
} from "../../src/protocol/index.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { writeMonitorConfig, spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { callApi } from "../harness/api-client.ts";
import { waitFor } from "../harness/wait-for.ts";

test("client disconnects are bucketed by account, reason and server, broadcast and replayed", async () => {
  await using server = await startTestServer("dc1");
  await using dir = await tempDir();
  const config = await writeMonitorConfig({
    path: join(dir.path, "natsmon.yaml"),
    dataDir: join(dir.path, "data"),
    system: "dc",
    url: server.url,
    user: SYS_USER,
    scraper: "interval: 1h, disconnect-bucket: 1s",
  });
  await using node = spawnNatsmon(["run", "--config", config]);
  const nc = await connect({ servers: await node.waitForUrl() });
  const subjects = systemSubjects("dc");
  try {
    // The tracker subscribes as the scrape side starts; the first status means it is up.
    await waitFor(() => callApi(nc, subjects.opsScraperStatus).then(() => true));
    const feed = nc.subscribe(subjects.feedDisconnect);
    for (let i = 0; i < 3; i++) {
      const client = await connect({
        servers: server.url,
        user: APP_USER.user,
        pass: APP_USER.password,
        name: `short-lived-${i}`,
      });
      await client.close();
    }
    let bucket: DisconnectBucket | undefined;
    for await (const m of feed) {
      bucket = m.json<DisconnectBucket>();
      if (bucket.groups.some((g) => g.account === "APP")) break;
    }
    assert.ok(bucket);
    assert.equal(bucket.system_id, "dc");
    assert.equal(Date.parse(bucket.end) - Date.parse(bucket.start), 1000);
    const app = bucket.groups.find((g) => g.account === "APP");
    assert.deepEqual(
      { account: app?.account, reason: app?.reason, server: app?.server },
      { account: "APP", reason: "Client Closed", server: "dc1" },
    );
    // All three may fall into one bucket or straddle two; the history has them all.
    const history = await callApi<DisconnectHistoryReply>(nc, subjects.opsDisconnectHistory, {});
    assert.equal(history.bucket_seconds, 1);
    assert.equal(history.history_seconds, 86_400);
    const appTotal = [...history.buckets, history.current]
      .flatMap((b) => b.groups)
      .filter((g) => g.account === "APP")
      .reduce((n, g) => n + g.count, 0);
    assert.equal(appTotal, 3);
    assert.ok(history.buckets.some((b) => b.start === bucket.start));

    const later = await callApi<DisconnectHistoryReply>(nc, subjects.opsDisconnectHistory, {
      since: new Date(Date.now() + 60_000).toISOString(),
    });
    assert.deepEqual(later.buckets, []);
    const newest = await callApi<DisconnectHistoryReply>(nc, subjects.opsDisconnectHistory, { limit: 1 });
    assert.equal(newest.buckets.length, 1);
    await assert.rejects(
      callApi(nc, subjects.opsDisconnectHistory, { since: "yesterday" }),
      /^Error: 400 since must be an RFC 3339 time/,
    );
  } finally {
    await nc.close();
  }
});
