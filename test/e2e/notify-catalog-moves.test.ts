/**
 * What a webhook receiver was told belongs to the system and the endpoint, not to the node
 * that told it (README: Notifications, "Pipeline"). Node `nb` holds the catalog role of a
 * system on an external sink and tells a real HTTP receiver of two firing findings; it is
 * stopped and node `nd`, with a data dir of its own, takes the role over; one finding clears
 * during the handover, the other once `nd` runs. Both resolves reach the receiver from `nd`,
 * though `nd` never told it of either (the audit's node D recorded nothing, so a finding that
 * cleared before D's first delivery was never resolved: the alerts stayed firing at the
 * receiver until the old node came back).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { WebhookAlert, WebhookMessage } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "moving";
const STREAMS = ["FIRST", "SECOND"];

/** The jetstream-003 alerts the receiver got, oldest first. */
const alerts = (receiver: HttpReceiver): WebhookAlert[] =>
  receiver.requests
    .flatMap((r) => (r.json() as WebhookMessage).alerts)
    .filter((a) => a.labels.alertname === "jetstream-003");

/** Each alert's last status at the receiver, by fingerprint (how a receiver tells alerts apart). */
const lastStatus = (receiver: HttpReceiver): Map<string, string> =>
  new Map(
    alerts(receiver).map((a) => {
      const name = a.annotations.entity_name ?? "";
      return [a.fingerprint, `${a.status} ${STREAMS.find((s) => name.endsWith(s)) ?? name}`];
    }),
  );

const checkRuns = async (nc: NatsConnection) =>
  (await sqlQuery<{ n: number }>(nc, SYSTEM, "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n;

test("a node that takes the catalog role over sends the resolves of what the node before it told the receiver", async () => {
  await using monitored = await startTestServer("moves-mon");
  await using sink = await startTestServer("moves-sink");
  await using dir = await tempDir();
  await using receiver = await startHttpReceiver();
  const start = async (id: string): Promise<{ node: NatsmonProcess; nc: NatsConnection }> => {
    const config = join(dir.path, `${id}.yaml`);
    await writeFile(
      config,
      [
        `node: {id: ${id}, data-dir: ${JSON.stringify(join(dir.path, id))}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "system:",
        `  id: ${SYSTEM}`,
        `  nats: {url: ${JSON.stringify(monitored.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        "scraper: {interval: 1s}",
        "notifications:",
        `  webhook: [{name: hook, url: ${JSON.stringify(`${receiver.url}/hook`)}, subscriptions: ["jetstream-003"]}]`,
      ].join("\n"),
    );
    const node = spawnNatsmon(["run", "--config", config]);
    await node.waitForUrl();
    return { node, nc: await connect({ servers: sink.url }) };
  };
  const app = await connect({ servers: monitored.url, user: APP_USER.user, pass: APP_USER.password });
  try {
    // Two streams at their message limit: jetstream-003 fires for both.
    const jsm = await jetstreamManager(app);
    const js = jetstream(app);
    for (const name of STREAMS) {
      await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], max_msgs: 10 });
      for (let i = 0; i < 10; i++) await js.publish(`${name.toLowerCase()}.${i}`, "x");
    }

    const before = await start("nb");
    try {
      await waitFor(() => alerts(receiver).filter((a) => a.status === "firing").length === 2, {
        timeoutMs: 60_000,
        message: "both firing alerts at the receiver, from the first catalog node",
      });
    } finally {
      await before.nc.close();
      assert.equal(await before.node.kill("SIGTERM"), 0, before.node.stderr().slice(-3000));
    }

    // One finding clears during the handover: the new holder's first epoch no longer has it.
    await jsm.streams.purge(STREAMS[0]!);
    const after = await start("nd");
    try {
      // The other clears once the new holder has diffed epochs of its own.
      await waitFor(async () => (await checkRuns(after.nc)) >= 3, {
        timeoutMs: 60_000,
        message: "three checked epochs on the node that took the role over",
      });
      await jsm.streams.purge(STREAMS[1]!);
      await waitFor(
        () => {
          const last = [...lastStatus(receiver).values()];
          return last.length > 0 && last.every((s) => s.startsWith("resolved"));
        },
        {
          timeoutMs: 60_000,
          message: "every jetstream-003 alert resolved at the receiver, by the node that took the role over",
        },
      );
      assert.deepEqual(
        [...new Set([...lastStatus(receiver).values()])].sort(),
        STREAMS.map((name) => `resolved ${name}`),
      );
    } catch (err) {
      process.stderr.write(after.node.stderr().slice(-6000));
      throw err;
    } finally {
      await after.nc.close();
      await after.node.kill("SIGTERM");
    }
  } finally {
    await app.close();
  }
});
