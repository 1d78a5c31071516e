import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { FiringFinding, Transition } from "../../../src/domain/index.ts";
import { transitionPayload } from "../../../src/protocol/index.ts";
import type { FindingTransition } from "../../../src/protocol/index.ts";

const STARTS = new Date("2026-11-22T10:00:00.000Z");
const ENDS = new Date("2026-11-22T10:05:00.000Z");

const stream: FiringFinding = {
  code: "jetstream-008",
  entityType: "stream",
  entityPk: 7,
  entityName: "ORDERS",
  server: "n1",
  severity: "critical",
  startsAt: STARTS,
};
const replica: FiringFinding = {
  ...stream,
  entityType: "stream_replica",
  entityKey: "n2",
  entityName: "ORDERS on n2",
};

const cases: { name: string; given: Transition; then: FindingTransition }[] = [
  {
    name: "a firing finding carries starts_at and neither prev_severity nor ends_at",
    given: { status: "firing", finding: stream },
    then: {
      code: "jetstream-008",
      entity_type: "stream",
      entity_pk: 7,
      entity_name: "ORDERS",
      status: "firing",
      severity: "critical",
      starts_at: "2026-11-22T10:00:00.000Z",
    },
  },
  {
    name: "a change carries the new severity and the one left behind",
    given: { status: "changed", finding: stream, prevSeverity: "warning" },
    then: {
      code: "jetstream-008",
      entity_type: "stream",
      entity_pk: 7,
      entity_name: "ORDERS",
      status: "changed",
      severity: "critical",
      prev_severity: "warning",
      starts_at: "2026-11-22T10:00:00.000Z",
    },
  },
  {
    name: "a resolve carries the severity it held, starts_at and ends_at",
    given: { status: "resolved", finding: { ...stream, severity: "warning" }, endsAt: ENDS },
    then: {
      code: "jetstream-008",
      entity_type: "stream",
      entity_pk: 7,
      entity_name: "ORDERS",
      status: "resolved",
      severity: "warning",
      starts_at: "2026-11-22T10:00:00.000Z",
      ends_at: "2026-11-22T10:05:00.000Z",
    },
  },
  {
    name: "entity_key appears for an entity that has a key",
    given: { status: "firing", finding: replica },
    then: {
      code: "jetstream-008",
      entity_type: "stream_replica",
      entity_pk: 7,
      entity_name: "ORDERS on n2",
      entity_key: "n2",
      status: "firing",
      severity: "critical",
      starts_at: "2026-11-22T10:00:00.000Z",
    },
  },
  {
    name: "an empty entity key is no key",
    given: { status: "resolved", finding: { ...stream, entityKey: "" }, endsAt: ENDS },
    then: {
      code: "jetstream-008",
      entity_type: "stream",
      entity_pk: 7,
      entity_name: "ORDERS",
      status: "resolved",
      severity: "critical",
      starts_at: "2026-11-22T10:00:00.000Z",
      ends_at: "2026-11-22T10:05:00.000Z",
    },
  },
];

describe("the finding transition payload", () => {
  for (const c of cases) {
    test(c.name, () => {
      // Compared as JSON: the wire has no undefined fields, only absent ones.
      assert.deepEqual(JSON.parse(JSON.stringify(transitionPayload(c.given))), c.then);
      assert.deepEqual(Object.keys(transitionPayload(c.given)).sort(), Object.keys(c.then).sort());
    });
  }
});
