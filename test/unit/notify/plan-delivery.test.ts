/**
 * What a receiver is told (spec: Finding status table, baseline rule 4; Notification
 * deliveries rule 2), given what it already knows: given / when / then.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { planDelivery, type KeyedEntry } from "../../../src/notify/index.ts";
import type { DeliveredAlertEntry, FindingTransition } from "../../../src/protocol/index.ts";

const STARTS = "2026-11-23T10:00:00.000Z";
const EPOCH = "2026-11-23T12:00:00.000Z";

function known(
  key: string,
  severity: DeliveredAlertEntry["severity"],
  startsAt = STARTS,
): DeliveredAlertEntry {
  return {
    system: "east",
    code: "server-019",
    entity_type: "server",
    entity_pk: Number(key),
    entity_name: `n${key}`,
    severity,
    starts_at: startsAt,
  };
}

function entry(
  key: string,
  t: Partial<FindingTransition> & Pick<FindingTransition, "status" | "severity">,
): KeyedEntry {
  return {
    key,
    entry: {
      system: "east",
      epoch: EPOCH,
      transition: {
        code: "server-019",
        entity_type: "server",
        entity_pk: Number(key),
        entity_name: `n${key}`,
        starts_at: STARTS,
        ...t,
      },
    },
  };
}

/** `<status> <key> <severity>` for each planned alert, in order. */
const sent = (plan: ReturnType<typeof planDelivery>) =>
  plan.alerts.map((a) => `${a.status} ${a.alert.entity_pk} ${a.alert.severity}`);

describe("planDelivery", () => {
  const rows: {
    name: string;
    knows: DeliveredAlertEntry[];
    batch: KeyedEntry[];
    webhook: string[];
    alertmanager: string[];
    then: { put: string[]; remove: string[] };
  }[] = [
    {
      name: "a new firing finding is sent firing",
      knows: [],
      batch: [entry("1", { status: "firing", severity: "warning" })],
      webhook: ["firing 1 warning"],
      alertmanager: ["firing 1 warning"],
      then: { put: ["1"], remove: [] },
    },
    {
      name: "a finding the receiver knows at the same severity and start is not sent again",
      knows: [known("1", "warning")],
      batch: [entry("1", { status: "firing", severity: "warning" })],
      webhook: [],
      alertmanager: [],
      then: { put: [], remove: [] },
    },
    {
      name: "a severity change is a firing alert at the new severity; alertmanager also resolves the old",
      knows: [known("1", "warning")],
      batch: [entry("1", { status: "changed", severity: "critical", prev_severity: "warning" })],
      webhook: ["firing 1 critical"],
      alertmanager: ["resolved 1 warning", "firing 1 critical"],
      then: { put: ["1"], remove: [] },
    },
    {
      name: "a change the receiver never heard of is sent as a firing alert",
      knows: [],
      batch: [entry("1", { status: "changed", severity: "critical", prev_severity: "warning" })],
      webhook: ["firing 1 critical"],
      alertmanager: ["firing 1 critical"],
      then: { put: ["1"], remove: [] },
    },
    {
      name: "a resolve is sent at the severity the receiver knows",
      knows: [known("1", "warning")],
      batch: [entry("1", { status: "resolved", severity: "critical", ends_at: EPOCH })],
      webhook: ["resolved 1 warning"],
      alertmanager: ["resolved 1 warning"],
      then: { put: [], remove: ["1"] },
    },
    {
      name: "a resolve of a finding the receiver never knew is dropped, never sent alone",
      knows: [],
      batch: [entry("1", { status: "resolved", severity: "warning", ends_at: EPOCH })],
      webhook: [],
      alertmanager: [],
      then: { put: [], remove: [] },
    },
    {
      name: "a fire then resolve in one batch sends nothing",
      knows: [],
      batch: [
        entry("1", { status: "firing", severity: "warning" }),
        entry("1", { status: "resolved", severity: "warning", ends_at: EPOCH }),
      ],
      webhook: [],
      alertmanager: [],
      then: { put: [], remove: [] },
    },
    {
      name: "a new run of a finding the receiver knows (a later start) is sent firing",
      knows: [known("1", "warning", "2026-11-22T00:00:00.000Z")],
      batch: [entry("1", { status: "firing", severity: "warning" })],
      webhook: ["firing 1 warning"],
      alertmanager: ["firing 1 warning"],
      then: { put: ["1"], remove: [] },
    },
    {
      name: "entries keep their order",
      knows: [known("2", "info")],
      batch: [
        entry("3", { status: "firing", severity: "critical" }),
        entry("2", { status: "resolved", severity: "info", ends_at: EPOCH }),
        entry("1", { status: "firing", severity: "warning" }),
      ],
      webhook: ["firing 3 critical", "resolved 2 info", "firing 1 warning"],
      alertmanager: ["firing 3 critical", "resolved 2 info", "firing 1 warning"],
      then: { put: ["3", "1"], remove: ["2"] },
    },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const knows = new Map(r.knows.map((k) => [String(k.entity_pk), k]));
      for (const type of ["webhook", "alertmanager"] as const) {
        const plan = planDelivery(r.batch, knows, type);
        assert.deepEqual(sent(plan), type === "webhook" ? r.webhook : r.alertmanager, type);
        assert.deepEqual([...plan.put.keys()], r.then.put, `${type} put`);
        assert.deepEqual([...plan.remove], r.then.remove, `${type} remove`);
      }
    });
  }

  test("a resolve carries its end; the old severity's resolve on a change ends at the epoch", () => {
    const end = "2026-11-23T11:59:00.000Z";
    const resolved = planDelivery(
      [entry("1", { status: "resolved", severity: "warning", ends_at: end })],
      new Map([["1", known("1", "warning")]]),
      "webhook",
    );
    assert.equal(resolved.alerts[0]!.endsAt!.toISOString(), end);
    const changed = planDelivery(
      [entry("1", { status: "changed", severity: "critical", prev_severity: "warning" })],
      new Map([["1", known("1", "warning")]]),
      "alertmanager",
    );
    assert.equal(changed.alerts[0]!.endsAt!.toISOString(), EPOCH);
  });
});
