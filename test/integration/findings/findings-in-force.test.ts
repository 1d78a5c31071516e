/**
 * hx.findings_in_force and the health grades agree with the findings feed: after every
 * epoch (each diff recorded as the commit handler records it), the catalog's findings in
 * force are exactly the tracker's firing set (identity and severity), through a silent
 * server, a partial one, a failed check, an epoch no server answered, a disabled check,
 * retention, duplicate rows and a baseline seeded from the catalog; a held finding keeps
 * its entity's grade.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { findingId } from "../../../src/domain/index.ts";
import { applyRetention } from "../../../src/catalog/index.ts";
import type { EpochFindings, FindingsTracker } from "../../../src/findings/index.ts";
import { recordFiring } from "../../../src/node/commit-handler.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { epochTime, trackerLab, type Row, type TrackerLab } from "./tracker-lab.ts";

const X: Row = { code: "jetstream-008", pk: 1, name: "ORDERS", severity: "warning" };
const Y: Row = { code: "server-007", type: "server", pk: 2, name: "n2", server: "n2", severity: "critical" };
const Z: Row = { code: "consumer-003", type: "consumer", pk: 3, name: "ORDERS > worker", severity: "info" };
/** A finding of no server: only an epoch no server answered cannot see it. */
const W: Row = {
  code: "meta-002",
  type: "meta_cluster",
  pk: 4,
  name: "meta",
  server: null,
  severity: "warning",
};
const WITHOUT_N2 = ["l1", "n1", "n3", "w1", "w2"];

let server: TestServer;
let nc: NatsConnection;
before(async () => {
  server = await startTestServer("inforce");
  nc = await connect({ servers: server.url });
});
after(async () => {
  await nc.close();
  await server[Symbol.asyncDispose]();
});

/** The tracker diffs the epoch, and the catalog records the firing set, as handleCommit does. */
async function diff(lab: TrackerLab, tracker: FindingsTracker, result: Promise<EpochFindings>) {
  const transitions = await tracker.onEpoch(await result);
  await recordFiring(lab.catalog, tracker);
  return transitions;
}

/** id → severity, and the ids the catalog marks held. */
async function inForce(lab: TrackerLab): Promise<{ severities: Map<string, string>; held: string[] }> {
  const rows = await lab.query(
    "SELECT code, entity_type, entity_pk, coalesce(entity_key, '') AS entity_key, severity, held FROM hx.findings_in_force",
  );
  const severities = new Map<string, string>();
  const held: string[] = [];
  for (const r of rows) {
    const id = findingId({
      code: String(r.code),
      entityType: String(r.entity_type),
      entityPk: Number(r.entity_pk),
      ...(r.entity_key === "" ? {} : { entityKey: r.entity_key as string }),
    });
    assert.ok(!severities.has(id), `${id} is in force once`);
    severities.set(id, String(r.severity));
    if (r.held === true) held.push(id);
  }
  return { severities, held: held.sort() };
}

async function assertAgrees(lab: TrackerLab, tracker: FindingsTracker, held: readonly Row[], step: string) {
  const catalog = await inForce(lab);
  const firing = new Map([...tracker.firing()].map(([id, f]) => [id, f.severity as string]));
  assert.deepEqual(
    catalog.severities,
    firing,
    `${step}: the catalog's findings in force are the feed's firing set`,
  );
  assert.deepEqual(
    catalog.held,
    held.map((r) => findingId({ code: r.code, entityType: r.type ?? "stream", entityPk: r.pk })).sort(),
    `${step}: held findings`,
  );
}

test("the findings in force and the grades follow the feed's firing set, held findings included", async () => {
  await using lab = await trackerLab(nc, "inforce");
  await using tracker = await lab.tracker(nc);
  await diff(lab, tracker, lab.epoch(0, [X, Y, Z, W]));
  await assertAgrees(lab, tracker, [], "all answered");

  // n2 is silent: Y (read from n2) has no row, and is held.
  await diff(lab, tracker, lab.epoch(1, [X, Z, W], { answered: WITHOUT_N2 }));
  await assertAgrees(lab, tracker, [Y], "n2 silent");
  const [n2] = await lab.query(
    "SELECT grade, critical, held, codes FROM hx.entity_health WHERE entity_pk = 2",
  );
  assert.deepEqual(
    n2,
    { grade: "red", critical: 1n, held: 1n, codes: [Y.code] },
    "the silent server stays red",
  );
  const [system] = await lab.query("SELECT grade, critical, warning, info, held FROM hx.system_health");
  assert.deepEqual(system, { grade: "red", critical: 1n, warning: 2n, info: 1n, held: 1n });

  // Still silent two epochs on, and X's check fails: both held, firing since epoch 0.
  await diff(lab, tracker, lab.epoch(2, [Z, W], { answered: WITHOUT_N2, failing: [X.code] }));
  await assertAgrees(lab, tracker, [X, Y], "n2 silent, X's check failed");
  const held = await lab.query(
    "SELECT code, starts_at, detail FROM hx.findings_in_force WHERE held ORDER BY code",
  );
  assert.deepEqual(
    held.map((r) => [r.code, (r.starts_at as Date).toISOString(), r.detail]),
    [
      [X.code, epochTime(0).toISOString(), null],
      [Y.code, epochTime(0).toISOString(), null],
    ],
  );

  // n2 answers only in part; X's check runs again without X: X resolves, Y is still held.
  await diff(lab, tracker, lab.epoch(3, [Z, W], { partial: ["n2"] }));
  await assertAgrees(lab, tracker, [Y], "n2 partial");

  // No server answers: nothing could be seen, every finding is held, W (of no server) too.
  await diff(lab, tracker, lab.epoch(4, [], { answered: [] }));
  await assertAgrees(lab, tracker, [Y, Z, W], "nobody answered");

  // Everyone answers: Y fires again at a lower severity, Z and W are gone.
  await diff(lab, tracker, lab.epoch(5, [{ ...Y, severity: "warning" }]));
  await assertAgrees(lab, tracker, [], "all answered again");
  const [graded] = await lab.query("SELECT grade, held FROM hx.entity_health WHERE entity_pk = 2");
  assert.deepEqual(graded, { grade: "amber", held: 0n });

  // Y clears while n2 answers, then n2 goes silent: a resolved finding is not held again.
  await diff(lab, tracker, lab.epoch(6, []));
  await diff(lab, tracker, lab.epoch(7, [], { answered: WITHOUT_N2 }));
  await assertAgrees(lab, tracker, [], "n2 silent after Y resolved");
  assert.deepEqual(await lab.query("SELECT grade, held FROM hx.system_health"), [
    { grade: "green", held: 0n },
  ]);
});

test("a held finding of a check disabled since is not in force", async () => {
  await using lab = await trackerLab(nc, "inforce-disabled");
  {
    await using first = await lab.tracker(nc);
    await diff(lab, first, lab.epoch(0, [X, Y]));
    await diff(lab, first, lab.epoch(1, [X], { answered: WITHOUT_N2 }));
    await assertAgrees(lab, first, [Y], "n2 silent");
  }
  // Y's check is turned off while n2 is still silent: the feed drops it without a resolve.
  await using second = await lab.tracker(nc, [Y.code]);
  // A disabled check that fires has rows flagged disabled; one that does not has none.
  await diff(lab, second, lab.epoch(2, [X], { answered: WITHOUT_N2, disabled: [Y.code] }));
  await assertAgrees(lab, second, [], "Y's check disabled");
  const grades = await lab.query("SELECT entity_pk FROM hx.entity_health ORDER BY entity_pk");
  assert.deepEqual(grades, [{ entity_pk: 1n }]);
});

test("the findings of a silent server no longer expected resolve, in the feed and in force", async () => {
  await using lab = await trackerLab(nc, "inforce-forgotten");
  await using tracker = await lab.tracker(nc);
  await diff(lab, tracker, lab.epoch(0, [X, Y]));
  await diff(lab, tracker, lab.epoch(1, [X], { answered: WITHOUT_N2 }));
  await assertAgrees(lab, tracker, [Y], "n2 silent");
  // n2 is forgotten (scraper.forget-after): nobody is left to report Y.
  const transitions = await diff(
    lab,
    tracker,
    lab.epoch(2, [X], { answered: WITHOUT_N2, expected: WITHOUT_N2 }),
  );
  assert.deepEqual(
    transitions.map((t) => [t.status, t.finding.code]),
    [["resolved", Y.code]],
  );
  await assertAgrees(lab, tracker, [], "n2 no longer expected");
});

test("the findings in force outlive retention of their rows, take one row per finding, and follow a seeded baseline", async () => {
  await using lab = await trackerLab(nc, "inforce-retention");
  {
    await using tracker = await lab.tracker(nc);
    await diff(lab, tracker, lab.epoch(0, [X, Y]));
    await diff(lab, tracker, lab.epoch(1, [X], { answered: WITHOUT_N2 }));
    // Retention removes epoch 0, Y's only row, while n2 is still silent: Y is still firing.
    await applyRetention(lab.catalog, epochTime(1));
    await diff(lab, tracker, lab.epoch(2, [X], { answered: WITHOUT_N2 }));
    await assertAgrees(lab, tracker, [Y], "Y's rows removed by retention");

    // Two rows for one finding (a critical one from n3): the feed keeps the stronger, so does the catalog.
    await diff(lab, tracker, lab.epoch(3, [X, { ...X, severity: "critical", server: "n3" }]));
    await assertAgrees(lab, tracker, [], "two rows for X");
    const [x] = await lab.query("SELECT severity, server, held FROM hx.findings_in_force");
    assert.deepEqual(x, { severity: "critical", server: "n3", held: false });
  }
  // Epochs checked with no feed, then a feed seeded from the catalog's latest run.
  await using seeded = await trackerLab(nc, "inforce-seeded");
  await seeded.epoch(0, [X, Y]);
  await seeded.epoch(1, [Z]);
  await using tracker = await seeded.tracker(nc);
  assert.equal(tracker.start, "seeded");
  await recordFiring(seeded.catalog, tracker);
  await assertAgrees(seeded, tracker, [], "seeded from the catalog");
});
