/**
 * The decisions that keep already-firing findings and pending changes straight: what the
 * start-up sync writes to the outbox (given its latest entries and the firing set), what an
 * Alertmanager resend carries (given what the receiver knows and what is pending), and when an
 * endpoint's consumer is made again (its filter digest): given / when / then.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FiringFinding } from "../../../src/domain/index.ts";
import {
  endpointFilterDigest,
  outboxRepairs,
  planDelivery,
  resendAlerts,
} from "../../../src/notify/index.ts";
import type { DeliveredAlertEntry, OutboxEntry } from "../../../src/protocol/index.ts";

const BASELINE = new Date("2026-11-23T12:00:00.000Z");
const EARLIER = "2026-11-23T11:00:00.000Z";
const LATER = "2026-11-23T12:01:00.000Z";
const STARTS = new Date("2026-11-23T10:00:00.000Z");

const firing = (
  pk: number,
  severity: FiringFinding["severity"] = "warning",
  code = "jetstream-003",
): FiringFinding => ({
  code,
  entityType: "stream",
  entityPk: pk,
  entityName: `s${pk}`,
  severity,
  startsAt: STARTS,
});
const key = (pk: number, code = "jetstream-003") => `east.${code}.stream.${pk}`;
const outboxEntry = (
  pk: number,
  status: "firing" | "resolved" | "changed",
  options: { severity?: FiringFinding["severity"]; epoch?: string; code?: string } = {},
): OutboxEntry => ({
  system: "east",
  epoch: options.epoch ?? EARLIER,
  transition: {
    code: options.code ?? "jetstream-003",
    entity_type: "stream",
    entity_pk: pk,
    entity_name: `s${pk}`,
    status,
    severity: options.severity ?? "warning",
    starts_at: STARTS.toISOString(),
    ...(status === "resolved" ? { ends_at: EARLIER } : {}),
  },
});
const repairs = (set: FiringFinding[], outbox: [number, OutboxEntry][], disabled: string[] = []) =>
  outboxRepairs(
    "east",
    BASELINE,
    new Map(set.map((f) => [String(f.entityPk), f])),
    new Map(outbox.map(([pk, e]) => [key(pk, e.transition.code), e])),
    disabled,
  ).map((r) => `${r.key} ${r.entry.transition.status} ${r.entry.transition.severity} ${r.entry.epoch}`);

describe("outboxRepairs", () => {
  test("a firing finding the outbox has no entry of gets a firing entry at the baseline's epoch", () => {
    assert.deepEqual(repairs([firing(1)], []), [`${key(1)} firing warning ${BASELINE.toISOString()}`]);
  });

  test("a firing finding the outbox has firing at the same severity and start needs nothing", () => {
    assert.deepEqual(repairs([firing(1)], [[1, outboxEntry(1, "firing")]]), []);
    assert.deepEqual(repairs([firing(1)], [[1, outboxEntry(1, "changed")]]), []);
  });

  test("a firing finding the outbox has resolved, or at another severity, gets a firing entry", () => {
    assert.deepEqual(repairs([firing(1)], [[1, outboxEntry(1, "resolved")]]), [
      `${key(1)} firing warning ${BASELINE.toISOString()}`,
    ]);
    assert.deepEqual(repairs([firing(1, "critical")], [[1, outboxEntry(1, "firing")]]), [
      `${key(1)} firing critical ${BASELINE.toISOString()}`,
    ]);
  });

  test("a finding the outbox has firing that is no longer up gets a resolve at the severity it held", () => {
    assert.deepEqual(repairs([], [[2, outboxEntry(2, "changed", { severity: "critical" })]]), [
      `${key(2)} resolved critical ${BASELINE.toISOString()}`,
    ]);
    assert.deepEqual(repairs([], [[2, outboxEntry(2, "resolved")]]), [], "already resolved");
  });

  test("a disabled check's finding gets no resolve (baseline rule 3)", () => {
    assert.deepEqual(repairs([], [[2, outboxEntry(2, "firing")]], ["jetstream-003"]), []);
  });

  test("an entry newer than the baseline is left for its epoch's marker to write again", () => {
    assert.deepEqual(repairs([], [[2, outboxEntry(2, "firing", { epoch: LATER })]]), []);
    assert.deepEqual(repairs([firing(1)], [[1, outboxEntry(1, "resolved", { epoch: LATER })]]), []);
  });
});

describe("outboxRepairs: what receivers are recorded knowing (the catalog role moved)", () => {
  const told = (pk: number, options: { starts?: string; code?: string } = {}): DeliveredAlertEntry => ({
    system: "east",
    code: options.code ?? "jetstream-003",
    entity_type: "stream",
    entity_pk: pk,
    entity_name: `s${pk}`,
    severity: "critical",
    starts_at: options.starts ?? STARTS.toISOString(),
  });
  const withKnown = (
    set: FiringFinding[],
    outbox: [number, OutboxEntry][],
    known: DeliveredAlertEntry[],
    disabled: string[] = [],
  ) =>
    outboxRepairs(
      "east",
      BASELINE,
      new Map(set.map((f) => [String(f.entityPk), f])),
      new Map(outbox.map(([pk, e]) => [key(pk, e.transition.code), e])),
      disabled,
      new Map(known.map((a) => [key(a.entity_pk, a.code), a])),
    ).map((r) => `${r.key} ${r.entry.transition.status} ${r.entry.transition.severity} ${r.entry.epoch}`);

  test("a known alert no longer firing, with no entry in this node's outbox, gets a resolve at the severity the receiver knows", () => {
    assert.deepEqual(withKnown([], [], [told(4)]), [`${key(4)} resolved critical ${BASELINE.toISOString()}`]);
  });

  test("a known alert still firing needs nothing more than the firing set says", () => {
    assert.deepEqual(withKnown([firing(4, "critical")], [], [told(4)]), [
      `${key(4)} firing critical ${BASELINE.toISOString()}`,
    ]);
    assert.deepEqual(
      withKnown(
        [firing(4, "critical")],
        [[4, outboxEntry(4, "firing", { severity: "critical" })]],
        [told(4)],
      ),
      [],
    );
  });

  test("a resolve already in the outbox is written again, since the receiver is still recorded knowing it", () => {
    assert.deepEqual(withKnown([], [[4, outboxEntry(4, "resolved")]], [told(4)]), [
      `${key(4)} resolved critical ${BASELINE.toISOString()}`,
    ]);
  });

  test("a known alert of a disabled check, or one that started after the baseline, gets no resolve", () => {
    assert.deepEqual(withKnown([], [], [told(4)], ["jetstream-003"]), []);
    assert.deepEqual(withKnown([], [], [told(4, { starts: LATER })]), []);
    assert.deepEqual(withKnown([], [[4, outboxEntry(4, "resolved", { epoch: LATER })]], [told(4)]), []);
  });
});

describe("resendAlerts", () => {
  const knownAlert = (
    pk: number,
    severity: DeliveredAlertEntry["severity"] = "warning",
  ): DeliveredAlertEntry => ({
    system: "east",
    code: "jetstream-003",
    entity_type: "stream",
    entity_pk: pk,
    entity_name: `s${pk}`,
    severity,
    starts_at: STARTS.toISOString(),
  });
  const known = new Map([
    [key(1), knownAlert(1)],
    [key(2), knownAlert(2)],
    [key(3), knownAlert(3)],
  ]);
  const all = () => true;
  const pks = (alerts: ReturnType<typeof resendAlerts>) =>
    alerts.map((a) => `${a.status} ${a.alert.entity_pk}`);

  test("with nothing pending, every known alert the endpoint sends is resent firing", () => {
    const none = planDelivery([], known, "alertmanager");
    assert.deepEqual(pks(resendAlerts(known, none, new Set(), all)), ["firing 1", "firing 2", "firing 3"]);
    assert.deepEqual(pks(resendAlerts(known, none, new Set(), (_s, _c) => false)), []);
  });

  test("a pending resolve or severity change leaves its alert to the change; a pending repeat does not", () => {
    const pending = planDelivery(
      [
        { key: key(1), entry: outboxEntry(1, "resolved") },
        { key: key(2), entry: outboxEntry(2, "changed", { severity: "critical" }) },
        { key: key(3), entry: outboxEntry(3, "firing") },
      ],
      known,
      "alertmanager",
    );
    assert.deepEqual(pks(resendAlerts(known, pending, new Set(), all)), ["firing 3"]);
  });

  test("an alert whose change is known to be on its way is left out", () => {
    const none = planDelivery([], known, "alertmanager");
    assert.deepEqual(pks(resendAlerts(known, none, new Set([key(2)]), all)), ["firing 1", "firing 3"]);
  });
});

describe("endpointFilterDigest", () => {
  const base = {
    subscriptions: ["jetstream-003"],
    ignore: [],
    systems: [],
    type: "webhook" as const,
    url: "https://hooks.example.com/a",
  };
  test("the same filter in another order is the same digest; a widened one, or a check disabled, is another", () => {
    const digest = endpointFilterDigest(base, new Map());
    assert.equal(
      endpointFilterDigest({ ...base, subscriptions: ["server-019", "jetstream-003"] }, new Map()),
      endpointFilterDigest({ ...base, subscriptions: ["jetstream-003", "server-019"] }, new Map()),
    );
    assert.notEqual(
      endpointFilterDigest({ ...base, subscriptions: ["jetstream-003", "server-019"] }, new Map()),
      digest,
    );
    assert.notEqual(endpointFilterDigest({ ...base, systems: ["east"] }, new Map()), digest);
    assert.notEqual(endpointFilterDigest(base, new Map([["east", ["server-019"]]])), digest);
    assert.equal(endpointFilterDigest(base, new Map([["east", []]])), digest);
    // Another receiver: it must be told what is firing.
    assert.notEqual(endpointFilterDigest({ ...base, url: "https://hooks.example.com/b" }, new Map()), digest);
    assert.notEqual(endpointFilterDigest({ ...base, type: "alertmanager" }, new Map()), digest);
  });
});
