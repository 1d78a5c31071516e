import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { findingId, type Finding, type FiringFinding, type Transition } from "../../../src/domain/index.ts";
import { diffFindings, type DiffContext } from "../../../src/findings/index.ts";

const T0 = new Date("2026-11-22T10:00:00.000Z");
const T1 = new Date("2026-11-22T10:01:00.000Z");
const T2 = new Date("2026-11-22T10:02:00.000Z");

/** A finding of a stream on server n1 unless told otherwise. */
function finding(overrides: Partial<Finding> = {}): Finding {
  return {
    code: "jetstream-008",
    entityType: "stream",
    entityPk: 7,
    entityName: "ORDERS",
    server: "n1",
    severity: "critical",
    ...overrides,
  };
}

function firing(startsAt: Date, overrides: Partial<Finding> = {}): FiringFinding {
  return { ...finding(overrides), startsAt };
}

function baselineOf(...entries: FiringFinding[]): Map<string, FiringFinding> {
  return new Map(entries.map((e) => [findingId(e), e]));
}

function ctx(overrides: Partial<DiffContext> = {}): DiffContext {
  return {
    epoch: T1,
    answered: new Set(["n1", "n2", "n3"]),
    disabled: new Set(),
    failed: new Set(),
    ...overrides,
  };
}

interface Case {
  name: string;
  given: FiringFinding[];
  when: { findings: Finding[]; ctx?: Partial<DiffContext> };
  then: { transitions: Transition[]; baseline: FiringFinding[] };
}

const cases: Case[] = [
  // Status table, row 1: absent → firing.
  {
    name: "a finding present now and absent before starts firing at this epoch",
    given: [],
    when: { findings: [finding()] },
    then: {
      transitions: [{ status: "firing", finding: firing(T1) }],
      baseline: [firing(T1)],
    },
  },
  // Row 2: firing, same severity → firing, nothing published.
  {
    name: "a finding still present at the same severity publishes nothing and keeps its start",
    given: [firing(T0)],
    when: { findings: [finding()] },
    then: { transitions: [], baseline: [firing(T0)] },
  },
  // Row 3: firing → resolved.
  {
    name: "a finding no longer present resolves at this epoch with the severity it held",
    given: [firing(T0, { severity: "warning" })],
    when: { findings: [] },
    then: {
      transitions: [{ status: "resolved", finding: firing(T0, { severity: "warning" }), endsAt: T1 }],
      baseline: [],
    },
  },
  // Row 4: severity moved → changed.
  {
    name: "a severity that rises while the finding stays up is a change from the old severity",
    given: [firing(T0, { severity: "warning" })],
    when: { findings: [finding({ severity: "critical" })] },
    then: {
      transitions: [
        { status: "changed", finding: firing(T0, { severity: "critical" }), prevSeverity: "warning" },
      ],
      baseline: [firing(T0, { severity: "critical" })],
    },
  },
  {
    name: "a severity that falls is a change too, and the start is carried",
    given: [firing(T0, { severity: "critical" })],
    when: { findings: [finding({ severity: "info" })] },
    then: {
      transitions: [
        { status: "changed", finding: firing(T0, { severity: "info" }), prevSeverity: "critical" },
      ],
      baseline: [firing(T0, { severity: "info" })],
    },
  },
  // Cached entity name.
  {
    name: "a resolve names the entity as the baseline cached it, though the entity is gone",
    given: [firing(T0, { entityName: "ORDERS (deleted since)" })],
    when: {
      findings: [finding({ code: "server-007", entityType: "server", entityPk: 1, entityName: "n1" })],
    },
    then: {
      transitions: [
        { status: "resolved", finding: firing(T0, { entityName: "ORDERS (deleted since)" }), endsAt: T1 },
        {
          status: "firing",
          finding: firing(T1, { code: "server-007", entityType: "server", entityPk: 1, entityName: "n1" }),
        },
      ],
      baseline: [firing(T1, { code: "server-007", entityType: "server", entityPk: 1, entityName: "n1" })],
    },
  },
  {
    name: "a finding that stays up takes the entity's newer name and server without publishing",
    given: [firing(T0, { entityName: "OLD", server: "n1" })],
    when: { findings: [finding({ entityName: "NEW", server: "n2" })] },
    then: { transitions: [], baseline: [firing(T0, { entityName: "NEW", server: "n2" })] },
  },
  {
    name: "a change carries the newer name",
    given: [firing(T0, { entityName: "OLD", severity: "warning" })],
    when: { findings: [finding({ entityName: "NEW" })] },
    then: {
      transitions: [
        { status: "changed", finding: firing(T0, { entityName: "NEW" }), prevSeverity: "warning" },
      ],
      baseline: [firing(T0, { entityName: "NEW" })],
    },
  },
  // Servers that did not answer.
  {
    name: "a finding whose server did not answer this epoch is kept, not resolved",
    given: [firing(T0, { server: "n2" })],
    when: { findings: [], ctx: { answered: new Set(["n1", "n3"]) } },
    then: { transitions: [], baseline: [firing(T0, { server: "n2" })] },
  },
  {
    name: "only the findings of the silent server are kept; the others resolve",
    given: [firing(T0, { server: "n2" }), firing(T0, { entityPk: 8, entityName: "EVENTS", server: "n1" })],
    when: { findings: [], ctx: { answered: new Set(["n1"]) } },
    then: {
      transitions: [
        {
          status: "resolved",
          finding: firing(T0, { entityPk: 8, entityName: "EVENTS", server: "n1" }),
          endsAt: T1,
        },
      ],
      baseline: [firing(T0, { server: "n2" })],
    },
  },
  {
    name: "a finding that belongs to no server is kept when no server answered at all",
    given: [firing(T0, { code: "meta-001", entityType: "meta_cluster", entityPk: 1, server: undefined })],
    when: { findings: [], ctx: { answered: new Set() } },
    then: {
      transitions: [],
      baseline: [
        firing(T0, { code: "meta-001", entityType: "meta_cluster", entityPk: 1, server: undefined }),
      ],
    },
  },
  {
    name: "a finding that belongs to no server (a sum over servers) is kept while an expected server did not answer",
    given: [firing(T0, { code: "user-002", entityType: "account", entityPk: 1, server: undefined })],
    when: { findings: [], ctx: { answered: new Set(["n1", "n2"]), expected: new Set(["n1", "n2", "n3"]) } },
    then: {
      transitions: [],
      baseline: [firing(T0, { code: "user-002", entityType: "account", entityPk: 1, server: undefined })],
    },
  },
  {
    name: "a finding that belongs to no server resolves once every expected server answered",
    given: [firing(T0, { code: "meta-001", entityType: "meta_cluster", entityPk: 1, server: undefined })],
    when: { findings: [], ctx: { answered: new Set(["n3"]), expected: new Set(["n3"]) } },
    then: {
      transitions: [
        {
          status: "resolved",
          finding: firing(T0, {
            code: "meta-001",
            entityType: "meta_cluster",
            entityPk: 1,
            server: undefined,
          }),
          endsAt: T1,
        },
      ],
      baseline: [],
    },
  },
  // Checks that failed to run.
  {
    name: "a finding of a check that failed to run this epoch is kept, not resolved",
    given: [firing(T0)],
    when: { findings: [], ctx: { failed: new Set(["jetstream-008"]) } },
    then: { transitions: [], baseline: [firing(T0)] },
  },
  // Disabled checks (baseline rule 3).
  {
    name: "a finding of a disabled check never fires",
    given: [],
    when: { findings: [finding({ code: "server-011" })], ctx: { disabled: new Set(["server-011"]) } },
    then: { transitions: [], baseline: [] },
  },
  {
    name: "disabling a check drops its firing findings without a resolve",
    given: [firing(T0, { code: "server-011" }), firing(T0)],
    when: { findings: [finding()], ctx: { disabled: new Set(["server-011"]) } },
    then: { transitions: [], baseline: [firing(T0)] },
  },
  {
    name: "a disabled check's finding that is still reported is dropped silently too",
    given: [firing(T0, { code: "server-011", severity: "warning" })],
    when: { findings: [finding({ code: "server-011" })], ctx: { disabled: new Set(["server-011"]) } },
    then: { transitions: [], baseline: [] },
  },
  // Baseline rule 1: a baseline seeded from the catalog's latest epoch.
  {
    name: "after seeding, the first epoch publishes only what changed since the seeded epoch",
    given: [firing(T0), firing(T0, { entityPk: 8, entityName: "EVENTS", severity: "warning" })],
    when: { findings: [finding(), finding({ entityPk: 9, entityName: "LOGS" })] },
    then: {
      transitions: [
        {
          status: "resolved",
          finding: firing(T0, { entityPk: 8, entityName: "EVENTS", severity: "warning" }),
          endsAt: T1,
        },
        { status: "firing", finding: firing(T1, { entityPk: 9, entityName: "LOGS" }) },
      ],
      baseline: [firing(T0), firing(T1, { entityPk: 9, entityName: "LOGS" })],
    },
  },
  // Identity.
  {
    name: "the entity key tells findings of one entity apart (one per replica)",
    given: [firing(T0, { entityType: "stream_replica", entityKey: "n1" })],
    when: {
      findings: [
        finding({ entityType: "stream_replica", entityKey: "n1" }),
        finding({ entityType: "stream_replica", entityKey: "n2" }),
      ],
    },
    then: {
      transitions: [
        { status: "firing", finding: firing(T1, { entityType: "stream_replica", entityKey: "n2" }) },
      ],
      baseline: [
        firing(T0, { entityType: "stream_replica", entityKey: "n1" }),
        firing(T1, { entityType: "stream_replica", entityKey: "n2" }),
      ],
    },
  },
  {
    name: "two rows for one identity count once, at the higher severity",
    given: [],
    when: { findings: [finding({ severity: "warning" }), finding({ severity: "critical" })] },
    then: {
      transitions: [{ status: "firing", finding: firing(T1) }],
      baseline: [firing(T1)],
    },
  },
];

describe("diffFindings", () => {
  for (const c of cases) {
    test(c.name, () => {
      const given = baselineOf(...c.given);
      const result = diffFindings(given, c.when.findings, ctx(c.when.ctx));
      assert.deepEqual(result.transitions, c.then.transitions);
      assert.deepEqual(result.baseline, baselineOf(...c.then.baseline));
    });
  }

  test("transitions come out ordered by code, entity type, entity pk and entity key, whatever the input order", () => {
    const given = baselineOf(
      firing(T0, { code: "server-002", entityType: "server", entityPk: 3 }),
      firing(T0, { code: "jetstream-008", entityPk: 2 }),
    );
    const findings = [
      finding({ code: "server-001", entityType: "server", entityPk: 10 }),
      finding({ code: "consumer-001", entityType: "consumer", entityPk: 4 }),
      finding({ code: "server-001", entityType: "server", entityPk: 2 }),
      finding({ code: "jetstream-008", entityType: "stream_replica", entityPk: 2, entityKey: "n2" }),
      finding({ code: "jetstream-008", entityType: "stream_replica", entityPk: 2 }),
      finding({ code: "jetstream-008", entityType: "stream_replica", entityPk: 2, entityKey: "n1" }),
    ];
    const expected = [
      ["consumer-001", "consumer", 4, undefined],
      ["jetstream-008", "stream", 2, undefined],
      ["jetstream-008", "stream_replica", 2, undefined],
      ["jetstream-008", "stream_replica", 2, "n1"],
      ["jetstream-008", "stream_replica", 2, "n2"],
      ["server-001", "server", 2, undefined],
      ["server-001", "server", 10, undefined],
      ["server-002", "server", 3, undefined],
    ];
    for (const order of [findings, [...findings].reverse()]) {
      const { transitions } = diffFindings(given, order, ctx());
      assert.deepEqual(
        transitions.map((t) => [
          t.finding.code,
          t.finding.entityType,
          t.finding.entityPk,
          t.finding.entityKey,
        ]),
        expected,
      );
    }
  });

  test("a finding kept while its server was silent resolves once the server answers without it", () => {
    const given = baselineOf(firing(T0, { server: "n2" }));
    const silent = diffFindings(given, [], ctx({ epoch: T1, answered: new Set(["n1"]) }));
    assert.deepEqual(silent.transitions, []);
    const back = diffFindings(silent.baseline, [], ctx({ epoch: T2, answered: new Set(["n1", "n2"]) }));
    assert.deepEqual(back.transitions, [
      { status: "resolved", finding: firing(T0, { server: "n2" }), endsAt: T2 },
    ]);
  });

  test("a finding of a silent server that is no longer expected resolves: nobody is left to report it", () => {
    const given = baselineOf(firing(T0, { server: "n2" }), firing(T0, { entityPk: 8, server: "n3" }));
    const expected = new Set(["n1", "n3"]);
    const next = diffFindings(given, [], ctx({ epoch: T1, answered: new Set(["n1"]), expected }));
    assert.deepEqual(next.transitions, [
      { status: "resolved", finding: firing(T0, { server: "n2" }), endsAt: T1 },
    ]);
    assert.deepEqual(
      [...next.baseline.values()],
      [firing(T0, { entityPk: 8, server: "n3" })],
      "n3 is still expected",
    );
  });

  test("startsAt is carried over many epochs and through a change until the finding resolves", () => {
    let baseline = diffFindings(new Map(), [finding({ severity: "warning" })], ctx({ epoch: T0 })).baseline;
    baseline = diffFindings(baseline, [finding({ severity: "warning" })], ctx({ epoch: T1 })).baseline;
    const changed = diffFindings(baseline, [finding({ severity: "critical" })], ctx({ epoch: T2 }));
    assert.deepEqual(changed.transitions, [
      { status: "changed", finding: firing(T0, { severity: "critical" }), prevSeverity: "warning" },
    ]);
    const T3 = new Date("2026-11-22T10:03:00.000Z");
    const resolved = diffFindings(changed.baseline, [], ctx({ epoch: T3 }));
    assert.deepEqual(resolved.transitions, [
      { status: "resolved", finding: firing(T0, { severity: "critical" }), endsAt: T3 },
    ]);
    const again = diffFindings(resolved.baseline, [finding()], ctx({ epoch: T3 }));
    assert.deepEqual(again.transitions, [{ status: "firing", finding: firing(T3) }]);
  });

  test("fields a row carries besides the finding's own (the catalog's disabled flag) stay out of the baseline", () => {
    const row = { ...finding(), disabled: false, detail: "{}" };
    const { transitions, baseline } = diffFindings(new Map(), [row], ctx());
    assert.deepEqual(transitions, [{ status: "firing", finding: firing(T1) }]);
    assert.deepEqual(baseline, baselineOf(firing(T1)));
  });

  test("the given baseline is left as it was", () => {
    const given = baselineOf(firing(T0), firing(T0, { entityPk: 8 }));
    const copy = new Map(given);
    diffFindings(given, [finding({ severity: "warning" })], ctx());
    assert.deepEqual(given, copy);
  });
});
