import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { findingId, type FiringFinding } from "../../../src/domain/index.ts";
import { baselineChanges } from "../../../src/findings/index.ts";

const T0 = new Date("2026-11-22T10:00:00.000Z");
const T1 = new Date("2026-11-22T10:01:00.000Z");

function entry(overrides: Partial<FiringFinding> = {}): FiringFinding {
  return {
    code: "server-007",
    entityType: "server",
    entityPk: 1,
    entityName: "n1",
    server: "n1",
    severity: "warning",
    startsAt: T0,
    ...overrides,
  };
}

function map(...entries: FiringFinding[]): Map<string, FiringFinding> {
  return new Map(entries.map((e) => [findingId(e), e]));
}

describe("baselineChanges", () => {
  test("an unchanged baseline writes nothing", () => {
    // A fresh Date with the same instant is the same start.
    assert.deepEqual(baselineChanges(map(entry()), map(entry({ startsAt: new Date(T0) }))), {
      put: [],
      remove: [],
    });
  });

  test("new entries and entries with any field changed are put; gone entries are removed", () => {
    const prev = map(
      entry(),
      entry({ entityPk: 2 }),
      entry({ entityPk: 3 }),
      entry({ entityPk: 4 }),
      entry({ entityPk: 5 }),
    );
    const next = map(
      entry(),
      entry({ entityPk: 2, severity: "critical" }),
      entry({ entityPk: 3, entityName: "renamed" }),
      entry({ entityPk: 4, server: "n2" }),
      entry({ entityPk: 6, startsAt: T1 }),
    );
    const changes = baselineChanges(prev, next);
    assert.deepEqual(
      changes.put.map((e) => e.entityPk),
      [2, 3, 4, 6],
    );
    assert.deepEqual(
      changes.remove.map((e) => e.entityPk),
      [5],
    );
  });
});
