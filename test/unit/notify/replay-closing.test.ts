/**
 * How a replay ends (replayClosing): given the bodies it sent and what the endpoint's receiver
 * is recorded knowing firing now, when the replay is done, then the receiver is told the
 * current state of each finding the replay named.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkDescription } from "../../../src/checks/index.ts";
import {
  currentAlerts,
  deliveryRequests,
  replayClosing,
  type PlannedAlert,
} from "../../../src/notify/index.ts";
import type { DeliveredAlertEntry, OutboxEntry } from "../../../src/protocol/index.ts";

const STARTS = "2026-11-23T10:00:00.000Z";
const SENT = new Date("2026-11-23T11:00:00.000Z");
const NOW = new Date("2026-11-23T12:00:00.000Z");
const CTX = { describe: checkDescription, externalUrl: undefined, systemCount: 1 };

const alert = (pk: number, severity: DeliveredAlertEntry["severity"] = "warning"): DeliveredAlertEntry => ({
  system: "east",
  code: "jetstream-003",
  entity_type: "stream",
  entity_pk: pk,
  entity_name: `s${pk}`,
  severity,
  starts_at: STARTS,
});
const key = (pk: number) => `east.jetstream-003.stream.${pk}`;
const fire = (a: DeliveredAlertEntry): PlannedAlert => ({ status: "firing", alert: a });
const resolve = (a: DeliveredAlertEntry): PlannedAlert => ({ status: "resolved", alert: a, endsAt: SENT });

/** The body a live send makes of these alerts, as the log holds it (and, for Alertmanager, as a replay stamps it at NOW). */
const body = (type: "webhook" | "alertmanager", alerts: PlannedAlert[]) =>
  deliveryRequests(type, "hook", alerts, CTX, type === "alertmanager" ? NOW : SENT)[0]!.body;

const closing = (type: "webhook" | "alertmanager", bodies: PlannedAlert[][], known: DeliveredAlertEntry[]) =>
  replayClosing(
    type,
    bodies.map((b) => body(type, b)),
    new Map(known.map((a) => [key(a.entity_pk), a])),
    NOW,
  ).map(
    (p) =>
      `${p.status} ${p.alert.entity_pk} ${p.alert.severity}${p.endsAt ? ` ${p.endsAt.toISOString()}` : ""}`,
  );

for (const type of ["webhook", "alertmanager"] as const) {
  describe(`replayClosing (${type})`, () => {
    test("an alert the replay left firing that the receiver is not recorded knowing is resolved now", () => {
      assert.deepEqual(closing(type, [[fire(alert(1)), fire(alert(2))]], [alert(2)]), [
        `resolved 1 warning ${NOW.toISOString()}`,
      ]);
    });

    test("an alert the replay left at the state the receiver knows needs nothing", () => {
      assert.deepEqual(closing(type, [[fire(alert(1))], [resolve(alert(2))]], [alert(1)]), []);
    });

    test("only a finding's last mention counts", () => {
      assert.deepEqual(closing(type, [[fire(alert(1))], [resolve(alert(1))]], []), []);
      assert.deepEqual(closing(type, [[resolve(alert(1))], [fire(alert(1))]], []), [
        `resolved 1 warning ${NOW.toISOString()}`,
      ]);
    });

    test("a known alert the replay left resolved is told firing again", () => {
      assert.deepEqual(closing(type, [[resolve(alert(1))]], [alert(1)]), ["firing 1 warning"]);
    });

    test("findings the replay did not name are left alone", () => {
      assert.deepEqual(closing(type, [[fire(alert(1))]], [alert(1), alert(9)]), []);
    });
  });
}

describe("replayClosing: a severity the replay left behind", () => {
  test("webhook: the known severity is told firing", () => {
    assert.deepEqual(closing("webhook", [[fire(alert(1, "warning"))]], [alert(1, "critical")]), [
      "firing 1 critical",
    ]);
  });

  test("alertmanager: the old severity is also resolved, as a live severity change does", () => {
    assert.deepEqual(closing("alertmanager", [[fire(alert(1, "warning"))]], [alert(1, "critical")]), [
      `resolved 1 warning ${NOW.toISOString()}`,
      "firing 1 critical",
    ]);
  });
});

describe("currentAlerts: what is firing now", () => {
  const entry = (
    pk: number,
    status: "firing" | "resolved",
    severity: DeliveredAlertEntry["severity"] = "warning",
  ) => ({
    key: key(pk),
    entry: {
      system: "east",
      epoch: SENT.toISOString(),
      transition: {
        code: "jetstream-003",
        entity_type: "stream",
        entity_pk: pk,
        entity_name: `s${pk}`,
        status,
        severity,
        starts_at: STARTS,
      },
    } satisfies OutboxEntry,
  });
  const now = (outbox: ReturnType<typeof entry>[], known: DeliveredAlertEntry[]) =>
    [...currentAlerts(outbox, new Map(known.map((a) => [key(a.entity_pk), a])))].map(
      ([k, a]) => `${k} ${a.severity}`,
    );

  test("a finding's latest outbox entry decides; the delivered state speaks for findings the outbox has none of", () => {
    assert.deepEqual(
      now([entry(1, "resolved"), entry(2, "firing", "critical")], [alert(1), alert(2), alert(3)]),
      [`${key(2)} critical`, `${key(3)} warning`],
    );
  });

  test("a finding firing in the outbox that the receiver was never told is firing now", () => {
    assert.deepEqual(now([entry(4, "firing")], []), [`${key(4)} warning`]);
  });
});
