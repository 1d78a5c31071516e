/**
 * Baseline rule 3 on an `alertmanager` endpoint, against a real HTTP receiver and the real
 * delivered-state bucket: a check disabled while its alert is firing is neither resolved nor
 * resent after the restart that disables it; what the receiver was told of it is forgotten.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Kvm } from "@nats-io/kv";
import type { DeliveredAlertEntry, PostableAlert } from "../../../src/protocol/index.ts";
import { systemAssets } from "../../../src/protocol/index.ts";
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { endpoint, finding, fire, startNotifyLab, FAST, type NotifyLab } from "./notify-lab.ts";

/** The alerts of a v2 alerts list as `<alertname> <entity_pk>`. */
const alertsOf = (req: ReceivedRequest) =>
  (req.json() as PostableAlert[]).map((a) => `${a.labels.alertname} ${a.labels.entity_pk}`);

describe("a check disabled while its alert is firing on an alertmanager endpoint", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;
  // A resend every 300 ms, so several happen within the test.
  const timing = { ...FAST, resendEveryMs: 300 };
  const am = () => endpoint({ name: "am", type: "alertmanager", url: receiver.url });
  const deliveredCodes = async () => {
    const kv = await new Kvm(lab.nc).open(systemAssets("east").deliveredBucket);
    const codes: string[] = [];
    for await (const key of await kv.keys()) {
      // The endpoint's record of which receiver its state is of, beside the alerts.
      if (key.endsWith(".receiver")) continue;
      const entry = await kv.get(key);
      if (entry?.operation === "PUT") codes.push(entry.json<DeliveredAlertEntry>().code);
    }
    return codes.sort();
  };

  before(async () => {
    lab = await startNotifyLab("disabled");
    receiver = await startHttpReceiver();
    await lab.start([am()], timing);
    await lab.epoch([fire(finding(1, "warning", "server-009")), fire(finding(2))]);
    await waitFor(() => receiver.requests.some((r) => alertsOf(r).includes("server-009 1")), {
      message: "server-009 delivered while enabled",
    });
    await waitFor(async () => (await deliveredCodes()).length === 2, {
      message: "both alerts in the delivered state",
    });
    await lab.stop();
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
  });

  test("after the restart that disables it, no resend carries it and no resolve is sent", async () => {
    const from = receiver.requests.length;
    await lab.start([am()], timing, new Map([["east", ["server-009"]]]));
    // The start-up resend and two of the timer's, each still carrying the enabled check.
    const resends = await waitFor(
      () => receiver.requests.length >= from + 3 && receiver.requests.slice(from, from + 3),
      { message: "three resends after the restart" },
    );
    for (const req of resends) assert.deepEqual(alertsOf(req), ["server-011 2"]);
    for (const req of receiver.requests.slice(from)) {
      assert.ok(!alertsOf(req).includes("server-009 1"), "the disabled check is never sent again");
    }
  });

  test("the disabled check's key is gone from the delivered state; the enabled one stays", async () => {
    assert.deepEqual(await deliveredCodes(), ["server-011"]);
  });
});
