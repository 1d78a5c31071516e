/**
 * `deliveries replay` and `deliveries log` (README: Notifications) against Debian's real
 * prometheus-alertmanager, a real nats-server holding the delivery log and the CLI spawned as
 * a process: a replayed firing alert is active in the Alertmanager however old its log
 * entry, the retry rounds of one failed delivery reach it once, and the log's table shows
 * what a failing receiver answered.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { checkDescription } from "../../../src/checks/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import {
  deliver,
  deliveryLogWriter,
  deliveryRequests,
  endpointId,
  writeDeliveryLogEntry,
  type PlannedAlert,
} from "../../../src/notify/index.ts";
import { systemAssets, type DeliveryLogEntry } from "../../../src/protocol/index.ts";
import { Kvm } from "@nats-io/kv";
import { startAlertmanager, type AlertmanagerProcess } from "../../harness/start-alertmanager.ts";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { runNatsmon } from "../../harness/natsmon-process.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint, finding, fire, startNotifyLab, FAST, type NotifyLab } from "./notify-lab.ts";

const MINUTE = 60_000;

describe("deliveries replay and log against a real Alertmanager", () => {
  let lab: NotifyLab;
  let am: AlertmanagerProcess;
  let receiver: HttpReceiver;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let config: string;
  const replay = (name: string) =>
    runNatsmon(["deliveries", "replay", "--endpoint", name, "--config", config, "--server", lab.sink.url]);
  const log = (...args: string[]) =>
    runNatsmon(["deliveries", "log", "--server", lab.sink.url, "--node", lab.nodeId, ...args]);
  const activeOf = async (pk: number) =>
    (await am.alerts()).filter((a) => a.labels.entity_pk === String(pk)).map((a) => a.labels.severity);

  before(async () => {
    lab = await startNotifyLab("amcli");
    am = await startAlertmanager();
    receiver = await startHttpReceiver();
    receiver.respondWith((req) =>
      req.path === "/moved"
        ? { status: 302, headers: { location: "https://am.example.com/api/v2/alerts" } }
        : { status: 503, body: "down for maintenance" },
    );
    dir = await tempDir();
    // What replays are sent to: every endpoint at the real Alertmanager.
    config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: ${lab.nodeId}}`,
        "system: {id: east}",
        "notifications:",
        "  alertmanager:",
        ...["am", "am-old"].map(
          (name) => `    - {name: ${name}, url: ${JSON.stringify(am.url)}, subscriptions: ["*"]}`,
        ),
        "",
      ].join("\n"),
    );
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await am?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the retry rounds of a failed delivery, each with its own endsAt, are replayed once", async () => {
    // The endpoint is down: the sender retries the firing alert round after round.
    await lab.start([endpoint({ name: "am", type: "alertmanager", url: `${receiver.url}/down` })], FAST);
    await lab.epoch([fire(finding(1))]);
    const rounds = await waitFor(
      async () => {
        const changes = (await lab.log("am")).filter((e) => e.kind === "change");
        return changes.length >= 3 && changes;
      },
      { message: "three failed rounds logged" },
    );
    await lab.stop();
    const all = (await lab.log("am")).filter((e) => e.kind === "change");
    assert.ok(all.length >= rounds.length);
    assert.equal(new Set(all.map((e) => e.body_digest)).size, all.length, "every round's body differs");

    const result = await replay("am");
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      new RegExp(
        `^\\S+ change 1 alert\\(s\\) sha256:[0-9a-f]{12}: HTTP 200\\n` +
          `replayed 1 of ${all.length} logged deliveries to am, ${all.length - 1} repeating a body already sent\\n$`,
      ),
    );
    assert.deepEqual(await activeOf(1), ["warning"]);
    const replays = await waitFor(
      async () => {
        const logged = (await lab.log("am")).filter((e) => e.kind === "replay");
        return logged.length > 0 && logged;
      },
      { message: "the replay logged" },
    );
    assert.equal(replays.length, 1, "one request reached the Alertmanager");
  });

  test("a firing delivery logged long ago is replayed firing: the Alertmanager lists it active, and its resolve stays resolved", async () => {
    // A severity change of entity 2 (critical firing, warning resolved), logged ten minutes
    // ago in two retry rounds, as the live send built them then: its endsAt have passed.
    const changedAt = Date.now() - 11 * MINUTE;
    const rounds = [10, 9].map((ago) => loggedDelivery("am-old", changedAt, Date.now() - ago * MINUTE));
    for (const e of rounds) await writeDeliveryLogEntry(lab.nc, lab.nodeId, e);
    // It is firing still: the receiver is recorded knowing it (a replay ends at the current state).
    const f = finding(2, "critical");
    const known = await new Kvm(lab.nc).open(systemAssets("east").deliveredBucket);
    await known.put(
      `${endpointId("am-old")}.east.${f.code}.${f.entityType}.${f.entityPk}`,
      JSON.stringify({
        system: "east",
        code: f.code,
        entity_type: f.entityType,
        entity_pk: f.entityPk,
        entity_name: f.entityName,
        severity: f.severity,
        starts_at: f.startsAt.toISOString(),
      }),
    );
    assert.equal(await activeOf(2).then((s) => s.length), 0, "nothing of entity 2 before the replay");

    const result = await replay("am-old");
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /replayed 1 of 2 logged deliveries to am-old, 1 repeating a body already sent\n$/,
    );
    const [active] = (await am.alerts()).filter((a) => a.labels.entity_pk === "2");
    assert.deepEqual(await activeOf(2), ["critical"], "the firing alert active; the resolved one not");
    assert.equal(active!.status.state, "active");
    assert.ok(new Date(active!.endsAt) > new Date(), "it ends ahead, as after a live send");
  });

  test("deliveries log shows each answer's status and the start of its reason", async () => {
    const record = deliveryLogWriter(lab.nc, lab.nodeId, silentLogger());
    // Alertmanager refuses an alert without labels; a receiver that moved redirects.
    await deliver(
      endpoint({ name: "am-bad", type: "alertmanager", url: am.url }),
      { body: '[{"labels":{}}]\n', alertCount: 1, systems: ["east"] },
      { kind: "test", record, userAgent: "natsmon-test", waitsMs: [] },
    );
    await deliver(
      endpoint({ name: "moved", url: `${receiver.url}/moved` }),
      { body: "{}\n", alertCount: 1, systems: ["east"] },
      { kind: "test", record, userAgent: "natsmon-test", waitsMs: [] },
    );
    await waitFor(async () => (await lab.log("moved")).length > 0, { message: "the redirect logged" });
    const table = await log("--kind", "test");
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /\n\S+\s+am-bad\s+test\s+1\s+rejected\s+\d+\s+1\s+sha256:[0-9a-f]{12}\s+400 at least one label pair required\n/,
    );
    assert.match(
      table.stdout,
      /\n\S+\s+moved\s+test\s+1\s+retry\s+.*\s302 redirects to https:\/\/am\.example\.com\/api\/v2\/alerts;/,
    );
    const widths = table.stdout
      .split("\n")
      .filter((l) => l.includes("moved"))
      .map((l) => l.length);
    assert.ok(
      widths.every((w) => w <= 160),
      "the table stays readable",
    );
  });

  test("deliveries log of an endpoint the log does not have says so and lists those it has", async () => {
    const result = await log("--endpoint", "nosuch");
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(
      result.stderr,
      'natsmon: the delivery log of node "amcli" has no delivery to an endpoint named "nosuch"; ' +
        "it has deliveries to: am, am-bad, am-old, moved\n",
    );
    // An endpoint that is logged, with nothing in the window asked for, is just that.
    const none = await log("--endpoint", "am-old", "--since", new Date(Date.now() + MINUTE).toISOString());
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "(no rows)\n");
  });
});

/**
 * A delivery of entity 2's change from warning to critical at `changedAtMs`, logged at `atMs`
 * as the live send logs it.
 */
function loggedDelivery(name: string, changedAtMs: number, atMs: number): DeliveryLogEntry {
  const f = finding(2, "critical");
  const base = {
    system: "east",
    code: f.code,
    entity_type: f.entityType,
    entity_pk: f.entityPk,
    entity_name: f.entityName,
    starts_at: f.startsAt.toISOString(),
  };
  const alerts: PlannedAlert[] = [
    { status: "firing", alert: { ...base, severity: "critical" } },
    { status: "resolved", alert: { ...base, severity: "warning" }, endsAt: new Date(changedAtMs) },
  ];
  const ctx = { describe: checkDescription, externalUrl: "https://natsmon.example.com", systemCount: 1 };
  const body = deliveryRequests("alertmanager", name, alerts, ctx, new Date(atMs))[0]!.body;
  return {
    time: new Date(atMs).toISOString(),
    endpoint: name,
    endpoint_type: "alertmanager",
    kind: "change",
    delivery_id: createHash("sha256").update(`${name}${atMs}`).digest("hex").slice(0, 16),
    attempt: 3,
    outcome: "retry",
    status_code: 503,
    error: "HTTP 503: down for maintenance",
    duration_ms: 120,
    alert_count: alerts.length,
    systems: ["east"],
    body_digest: `sha256:${createHash("sha256").update(body).digest("hex")}`,
    body_bytes: Buffer.byteLength(body),
    body,
  };
}
