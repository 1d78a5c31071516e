/**
 * `natsmon deliveries replay` leaves the receiver at the current state (README: Notifications,
 * "Delivery log"). A real HTTP receiver answers 500 for a while; meanwhile jetstream-003 fires
 * for a stream of a real monitored server and clears again, so the failed rounds in the
 * delivery log carry its firing alert and no resolve (a finding that fires and resolves before
 * delivery sends nothing). Replaying them shows it firing again; the replay then resolves it,
 * as the endpoint's delivered state does not hold it, and leaves the finding still up firing.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { nodeAssets, type WebhookAlert, type WebhookMessage } from "../../src/protocol/index.ts";
import { endpointId } from "../../src/notify/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver, type HttpReceiver } from "../harness/http-receiver.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "replayed";

/** The jetstream-003 alerts of the requests the receiver answered `status`, as `<status> <stream>`. */
const alertsAnswered = (receiver: HttpReceiver, status?: number): string[] =>
  receiver.requests
    .filter((r) => status === undefined || r.status === status)
    .flatMap((r) => (r.json() as WebhookMessage).alerts)
    .filter((a) => a.labels.alertname === "jetstream-003")
    .map(describe);

const describe = (a: WebhookAlert) =>
  `${a.status} ${/(OUTAGE|STEADY)$/.exec(a.annotations.entity_name ?? "")?.[1] ?? a.annotations.entity_name}`;

/** Each jetstream-003 alert's last state at the receiver, by fingerprint, in `from` on. */
const lastStates = (receiver: HttpReceiver, from = 0): string[] => {
  const last = new Map<string, string>();
  for (const r of receiver.requests.slice(from)) {
    for (const a of (r.json() as WebhookMessage).alerts) {
      if (a.labels.alertname === "jetstream-003") last.set(a.fingerprint, describe(a));
    }
  }
  return [...last.values()].sort();
};

const count = async (nc: NatsConnection, sql: string) =>
  (await sqlQuery<{ n: number }>(nc, SYSTEM, sql))[0]!.n;

const fill = async (js: JetStreamClient, name: string) => {
  for (let i = 0; i < 10; i++) await js.publish(`${name.toLowerCase()}.${i}`, "x");
};

test("a replay after an outage ends with the receiver at the current state: a finding that fired and cleared during the outage is resolved", async () => {
  await using monitored = await startTestServer("replay-mon");
  await using dir = await tempDir();
  await using receiver = await startHttpReceiver();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: rn, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "system:",
      `  id: ${SYSTEM}`,
      `  nats: {url: ${JSON.stringify(monitored.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      "scraper: {interval: 1s}",
      "notifications:",
      `  webhook: [{name: hook, url: ${JSON.stringify(`${receiver.url}/hook`)}, subscriptions: ["jetstream-003"]}]`,
    ].join("\n"),
  );
  const app = await connect({ servers: monitored.url, user: APP_USER.user, pass: APP_USER.password });
  const node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(app);
    const js = jetstream(app);
    for (const name of ["STEADY", "OUTAGE"]) {
      await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], max_msgs: 10 });
    }
    // A finding up before the outage, delivered: the receiver knows it.
    await fill(js, "STEADY");
    await waitFor(() => alertsAnswered(receiver, 200).includes("firing STEADY"), {
      timeoutMs: 60_000,
      message: "the steady finding delivered",
    });

    // The outage: the other finding fires, its deliveries fail, and it clears before the end.
    receiver.setStatus(500);
    await fill(js, "OUTAGE");
    await waitFor(() => alertsAnswered(receiver, 500).includes("firing OUTAGE"), {
      timeoutMs: 60_000,
      message: "a failed delivery of the outage finding",
    });
    await jsm.streams.purge("OUTAGE");
    const firingSql = "SELECT count(*) AS n FROM hx.findings_firing WHERE code = 'jetstream-003'";
    await waitFor(async () => (await count(nc, firingSql)) === 1, {
      timeoutMs: 60_000,
      message: "the outage finding resolved in the catalog",
    });
    // The live sender's next round, still in the outage, finds nothing to tell (fired and
    // cleared unseen) and acks its entries, sending nothing.
    const sinkJsm = await jetstreamManager(nc);
    const assets = nodeAssets("rn");
    await waitFor(
      async () => {
        const info = await sinkJsm.consumers.info(
          assets.outboxStream,
          assets.endpointConsumer(endpointId("hook")),
        );
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 120_000, message: "the live sender settled with nothing to send" },
    );
    receiver.setStatus(200);
    assert.ok(!alertsAnswered(receiver, 200).includes("firing OUTAGE"), "the live sender never told it");

    const from = receiver.requests.length;
    const replay = await runNatsmon([
      "deliveries",
      "replay",
      "--endpoint",
      "hook",
      "--config",
      config,
      "--server",
      url,
    ]);
    assert.equal(replay.code, 0, replay.stderr);
    const replayed = receiver.requests.slice(from);
    assert.ok(
      replayed.some((r) => (r.json() as WebhookMessage).alerts.map(describe).includes("firing OUTAGE")),
      "the replay re-sent the failed rounds",
    );
    assert.deepEqual(lastStates(receiver, from), ["firing STEADY", "resolved OUTAGE"]);
    assert.match(replay.stdout, /current state: 1 alert\(s\): HTTP 200/);
    assert.match(
      replay.stdout,
      /; then the current state: 1 alert\(s\) resolved \(not firing now\), 0 firing now\n$/,
    );
  } catch (err) {
    process.stderr.write(node.stderr().slice(-6000));
    throw err;
  } finally {
    await nc.close();
    await app.close();
    await node.kill("SIGTERM");
  }
});
