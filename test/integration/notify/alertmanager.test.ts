/**
 * `alertmanager` endpoints against Debian's real prometheus-alertmanager (spec: Alert labels
 * and annotations, Notification deliveries 2 and 3): what natsmon sends is what the
 * Alertmanager lists in `GET /api/v2/alerts`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startAlertmanager, type AlertmanagerProcess } from "../../harness/start-alertmanager.ts";
import { waitFor } from "../../harness/wait-for.ts";
import {
  change,
  endpoint,
  finding,
  fire,
  resolve,
  startNotifyLab,
  FAST,
  type NotifyLab,
} from "./notify-lab.ts";

describe("alertmanager endpoints against a real Alertmanager", () => {
  let lab: NotifyLab;
  let am: AlertmanagerProcess;
  const active = async (pk: number) =>
    (await am.alerts()).filter(
      (a) => a.labels.entity_pk === String(pk) && a.labels.alertname === "server-011",
    );

  before(async () => {
    lab = await startNotifyLab("am");
    am = await startAlertmanager();
    // A resend every second, so the minute's behaviour shows in a test's time.
    await lab.start([endpoint({ name: "am", type: "alertmanager", url: am.url })], {
      ...FAST,
      resendEveryMs: 1_000,
    });
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await am?.[Symbol.asyncDispose]();
  });

  test("a firing finding is listed with natsmon's labels, annotations and startsAt", async () => {
    await lab.epoch([fire(finding(1))]);
    const [alert] = await waitFor(
      async () => {
        const found = await active(1);
        return found.length > 0 && found;
      },
      { message: "the alert in GET /api/v2/alerts" },
    );
    assert.deepEqual(alert!.labels, {
      alertname: "server-011",
      category: "saturation",
      entity_pk: "1",
      entity_type: "server",
      scope: "server",
      severity: "warning",
      source: "natsmon",
      system: "east",
    });
    assert.equal(alert!.annotations.entity_name, "n1");
    assert.ok(alert!.annotations.summary && alert!.annotations.description);
    assert.equal(new Date(alert!.startsAt).toISOString(), finding(1).startsAt.toISOString());
    assert.equal(alert!.status.state, "active");
  });

  test("the minute's resend keeps an active alert from expiring", async () => {
    const [first] = await active(1);
    await waitFor(
      async () => {
        const [now] = await active(1);
        return now !== undefined && new Date(now.endsAt) > new Date(first!.endsAt);
      },
      { message: "endsAt moved forward by a resend" },
    );
  });

  test("a severity change leaves only the new severity active", async () => {
    await lab.epoch([change(finding(1, "critical"), "warning")]);
    await waitFor(
      async () => {
        const found = await active(1);
        return found.length === 1 && found[0]!.labels.severity === "critical";
      },
      { message: "only the critical alert active" },
    );
  });

  test("a resolve removes the alert", async () => {
    await lab.epoch([resolve(finding(1, "critical"), new Date())]);
    await waitFor(async () => (await active(1)).length === 0, { message: "the alert gone from GET" });
  });

  test("at start-up a sender tells its Alertmanager every alert it knows as firing", async () => {
    await lab.epoch([fire(finding(2))]);
    await waitFor(async () => (await active(2)).length === 1, { message: "entity 2 firing" });
    await lab.stop();
    // A fresh Alertmanager holds nothing; no change follows (the epoch after the start has none),
    // and no minute passes.
    await using fresh = await startAlertmanager();
    await lab.start([endpoint({ name: "am", type: "alertmanager", url: fresh.url })], {
      ...FAST,
      resendEveryMs: 3_600_000,
    });
    // The first epoch diffed since the start: a receiver that knows no alert gets its first delivery.
    await lab.epoch([]);
    const [alert] = await waitFor(
      async () => {
        const found = (await fresh.alerts()).filter((a) => a.labels.entity_pk === "2");
        return found.length > 0 && found;
      },
      { message: "entity 2 firing on the fresh Alertmanager" },
    );
    assert.equal(alert!.labels.severity, "warning");
    assert.equal(
      (await fresh.alerts()).some((a) => a.labels.entity_pk === "1"),
      false,
      "a resolved alert is not sent",
    );
  });
});
