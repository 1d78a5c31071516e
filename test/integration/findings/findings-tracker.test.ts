import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { findingId, type FiringFinding } from "../../../src/domain/index.ts";
import { openFindingsBaseline } from "../../../src/findings/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { epochTime, trackerLab, type Row } from "./tracker-lab.ts";

/** A JSZ body in which `stream` has no leader (its cluster names none). */
function withoutLeader(body: unknown, stream: string): unknown {
  const copy = structuredClone(body) as {
    data?: { account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[] };
  };
  for (const account of copy.data?.account_details ?? [])
    for (const detail of account.stream_detail ?? [])
      if (detail.name === stream && detail.cluster) delete detail.cluster.leader;
  return copy;
}

/** The baseline entry (and transition finding) a row becomes, firing since `startsAt`. */
function firing(row: Row, startsAt: Date): FiringFinding {
  const server = row.server === undefined ? "n1" : row.server;
  return {
    code: row.code,
    entityType: row.type ?? "stream",
    entityPk: row.pk,
    ...(row.key === undefined ? {} : { entityKey: row.key }),
    entityName: row.name,
    ...(server === null ? {} : { server }),
    severity: row.severity,
    startsAt,
  };
}

function mapOf(...entries: FiringFinding[]): Map<string, FiringFinding> {
  return new Map(entries.map((e) => [findingId(e), e]));
}

const X: Row = { code: "jetstream-008", pk: 1, name: "ORDERS", severity: "warning" };
const Y: Row = { code: "server-007", type: "server", pk: 2, name: "n2", server: "n2", severity: "critical" };
const Z: Row = { code: "consumer-003", type: "consumer", pk: 3, name: "ORDERS > worker", severity: "info" };

describe("the findings tracker on a real nats-server and a real catalog", () => {
  let server: TestServer;
  let nc: NatsConnection;

  before(async () => {
    server = await startTestServer("track1");
    nc = await connect({ servers: server.url });
  });
  after(async () => {
    await nc.close();
    await server[Symbol.asyncDispose]();
  });

  test("with no check run and an empty bucket, the first epoch establishes the baseline and publishes nothing", async () => {
    await using lab = await trackerLab(nc, "fresh");
    await using tracker = await lab.tracker(nc);
    assert.equal(tracker.start, "empty");
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(0, [X, Y])), []);
    assert.deepEqual(tracker.firing(), mapOf(firing(X, epochTime(0)), firing(Y, epochTime(0))));

    // The next epoch publishes what changed since: X rose, Y cleared, Z appeared.
    const t1 = await tracker.onEpoch(await lab.epoch(1, [{ ...X, severity: "critical" }, Z]));
    assert.deepEqual(t1, [
      { status: "firing", finding: firing(Z, epochTime(1)) },
      {
        status: "changed",
        finding: firing({ ...X, severity: "critical" }, epochTime(0)),
        prevSeverity: "warning",
      },
      { status: "resolved", finding: firing(Y, epochTime(0)), endsAt: epochTime(1) },
    ]);
    const stored = await (await openFindingsBaseline(nc, "fresh", silentLogger())).load();
    assert.deepEqual(stored.findings, tracker.firing());
    assert.deepEqual(stored.epoch, epochTime(1));
  });

  test("an empty bucket beside a catalog with check runs is seeded from the latest run with each finding's real start", async () => {
    await using lab = await trackerLab(nc, "seeded");
    // X fires from epoch 0 on; Y fired in epoch 0, stopped, and fires again from epoch 2;
    // Z is a disabled check's finding.
    await lab.epoch(0, [X, Y]);
    await lab.epoch(1, [X]);
    await lab.epoch(2, [X, Y, Z], { disabled: [Z.code] });
    await using tracker = await lab.tracker(nc);
    assert.equal(tracker.start, "seeded");
    const seeded = mapOf(firing(X, epochTime(0)), firing(Y, epochTime(2)));
    assert.deepEqual(tracker.firing(), seeded);
    // The seed is saved, so a restart before the next epoch loads it rather than seeding again.
    const stored = await (await openFindingsBaseline(nc, "seeded", silentLogger())).load();
    assert.deepEqual(stored, {
      saved: true,
      epoch: epochTime(2),
      catalogId: undefined,
      findings: seeded,
      held: new Map(),
      transitions: undefined,
    });

    // The first epoch indexed publishes only what changed since the seeded run.
    const t3 = await tracker.onEpoch(await lab.epoch(3, [X, Z], { disabled: [Z.code] }));
    assert.deepEqual(t3, [{ status: "resolved", finding: firing(Y, epochTime(2)), endsAt: epochTime(3) }]);
  });

  test("a restart keeps startsAt from the bucket, does not re-publish what stays up, and resolves what cleared meanwhile", async () => {
    await using lab = await trackerLab(nc, "restart");
    {
      await using first = await lab.tracker(nc);
      assert.deepEqual(await first.onEpoch(await lab.epoch(0, [X, Y])), []);
      assert.deepEqual(await first.onEpoch(await lab.epoch(1, [X, Y])), []);
    }
    // The node is down while epoch 2 is folded (no tracker sees it); Y cleared meanwhile.
    await lab.epoch(2, [X]);
    const other = await connect({ servers: server.url });
    try {
      await using second = await lab.tracker(other);
      assert.equal(second.start, "stored");
      assert.deepEqual(second.firing(), mapOf(firing(X, epochTime(0)), firing(Y, epochTime(0))));
      const t3 = await second.onEpoch(await lab.epoch(3, [X]));
      assert.deepEqual(t3, [{ status: "resolved", finding: firing(Y, epochTime(0)), endsAt: epochTime(3) }]);
      assert.deepEqual(second.firing(), mapOf(firing(X, epochTime(0))));
    } finally {
      await other.close();
    }
  });

  test("a catalog rebuilt beside a stored baseline publishes nothing on its first epoch and keeps the starts of findings still up", async () => {
    {
      await using old = await trackerLab(nc, "rebuilt");
      await using first = await old.tracker(nc);
      await first.onEpoch(await old.epoch(0, [X, Y]));
      await first.onEpoch(await old.epoch(1, [X, Y]));
    }
    // A new data dir: the same entities get other pks, and pk 2 now names another stream.
    await using lab = await trackerLab(nc, "rebuilt");
    await using tracker = await lab.tracker(nc);
    assert.equal(tracker.start, "replaced");
    assert.equal(tracker.establishing(), true);
    const movedX: Row = { ...X, pk: 7 };
    const other: Row = {
      code: Y.code,
      type: "server",
      pk: 2,
      name: "n3",
      server: "n3",
      severity: "critical",
    };
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [movedX, other])), []);
    assert.equal(tracker.establishing(), false);
    const expected = mapOf(firing(movedX, epochTime(0)), firing(other, epochTime(2)));
    assert.deepEqual(tracker.firing(), expected);
    const stored = await (await openFindingsBaseline(nc, "rebuilt", silentLogger())).load();
    assert.deepEqual(stored.findings, expected);
    // From here on, changes publish as usual.
    const t3 = await tracker.onEpoch(await lab.epoch(3, [movedX]));
    assert.deepEqual(t3, [
      { status: "resolved", finding: firing(other, epochTime(2)), endsAt: epochTime(3) },
    ]);
  });

  test("a stream between leaders (every server answers, none leads it) keeps its findings and their start", async () => {
    await using lab = await trackerLab(nc, "leaderless");
    await using tracker = await lab.tracker(nc);
    await tracker.onEpoch(await lab.epoch(0, []));
    const [orders] = await lab.query("SELECT stream_pk FROM hx.stream_ident WHERE name = 'ORDERS'");
    const full: Row = {
      code: "jetstream-003",
      pk: Number(orders!.stream_pk),
      name: "ORDERS",
      severity: "warning",
      server: "n2",
    };
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(1, [full])), [
      { status: "firing", finding: firing(full, epochTime(1)) },
    ]);
    // An election: each server still lists its replica of ORDERS, and none names a leader.
    const election = labReplies().map((r) =>
      r.source === "jsz" ? { ...r, body: withoutLeader(r.body, "ORDERS") } : r,
    );
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [], { replies: election })), []);
    assert.deepEqual(tracker.firing(), mapOf(firing(full, epochTime(1))));
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(3, [full])), []);
    // Led again and clear: it resolves, with the start it had.
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(4, [])), [
      { status: "resolved", finding: firing(full, epochTime(1)), endsAt: epochTime(4) },
    ]);
  });

  test("a disabled check's findings never fire, and disabling one drops its findings without a resolve", async () => {
    await using lab = await trackerLab(nc, "disabled");
    {
      await using first = await lab.tracker(nc);
      await first.onEpoch(await lab.epoch(0, []));
      assert.deepEqual(await first.onEpoch(await lab.epoch(1, [X, Y])), [
        { status: "firing", finding: firing(X, epochTime(1)) },
        { status: "firing", finding: firing(Y, epochTime(1)) },
      ]);
    }
    // Restarted with Y's check and Z's check turned off: both still run, flagged disabled.
    await using second = await lab.tracker(nc, [Y.code, Z.code]);
    // Before any epoch: Y's check is off, so Y fires no more, though the bucket still holds it.
    assert.deepEqual(second.firing(), mapOf(firing(X, epochTime(1))));
    const t2 = await second.onEpoch(await lab.epoch(2, [X, Y, Z], { disabled: [Y.code, Z.code] }));
    assert.deepEqual(t2, []);
    assert.deepEqual(second.firing(), mapOf(firing(X, epochTime(1))));
    const stored = await (await openFindingsBaseline(nc, "disabled", silentLogger())).load();
    assert.deepEqual(stored.findings, mapOf(firing(X, epochTime(1))));
    // Y stays silent once its check is off, even when its rows stop.
    assert.deepEqual(await second.onEpoch(await lab.epoch(3, [X], { disabled: [Y.code, Z.code] })), []);
  });

  test("findings of a server that did not answer are kept, in the bucket too, and resolve once it answers without them", async () => {
    await using lab = await trackerLab(nc, "silent");
    await using tracker = await lab.tracker(nc);
    await tracker.onEpoch(await lab.epoch(0, [X, Y]));
    const withoutN2 = ["l1", "n1", "n3", "w1", "w2"];
    // n2 is silent: Y (read from n2) is kept though its row is gone; X (from n1) is kept as it still fires.
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(1, [X], { answered: withoutN2 })), []);
    const stored = await (await openFindingsBaseline(nc, "silent", silentLogger())).load();
    assert.deepEqual(stored.findings, mapOf(firing(X, epochTime(0)), firing(Y, epochTime(0))));
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [X])), [
      { status: "resolved", finding: firing(Y, epochTime(0)), endsAt: epochTime(2) },
    ]);
  });

  test("findings of a server that answered only part of the epoch are kept; they resolve once it answers in full", async () => {
    await using lab = await trackerLab(nc, "partial");
    await using tracker = await lab.tracker(nc);
    await tracker.onEpoch(await lab.epoch(0, [X, Y]));
    // n2 answered, but not every request (its JSZ came too late, say): Y's row is missing, not gone.
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(1, [X], { partial: ["n2"] })), []);
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [X])), [
      { status: "resolved", finding: firing(Y, epochTime(0)), endsAt: epochTime(2) },
    ]);
  });

  test("findings of a check that failed to run are kept until it runs again", async () => {
    await using lab = await trackerLab(nc, "failing");
    await using tracker = await lab.tracker(nc);
    await tracker.onEpoch(await lab.epoch(0, [X, Y]));
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(1, [Y], { failing: [X.code] })), []);
    assert.deepEqual(tracker.firing(), mapOf(firing(X, epochTime(0)), firing(Y, epochTime(0))));
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [Y])), [
      { status: "resolved", finding: firing(X, epochTime(0)), endsAt: epochTime(2) },
    ]);
  });

  test("an epoch older than the baseline is not diffed", async () => {
    await using lab = await trackerLab(nc, "older");
    const early = await lab.epoch(0, [Z]);
    await using tracker = await lab.tracker(nc);
    await tracker.onEpoch(await lab.epoch(1, [X]));
    assert.deepEqual(await tracker.onEpoch(early), []);
    assert.deepEqual(tracker.firing(), mapOf(firing(X, epochTime(1))));
  });

  test("a baseline from an epoch named far ahead of the node's clock does not hold back the epochs after it", async () => {
    await using lab = await trackerLab(nc, "ahead");
    await lab.epoch(0, [X]);
    // The node's clock reads 10:02; an epoch named 10:30 (a scrape host's clock 28 min ahead) becomes the baseline.
    let clock = epochTime(2).getTime();
    await using tracker = await lab.tracker(nc, [], () => clock);
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(30, [X])), []);
    assert.deepEqual(tracker.baselineEpoch(), epochTime(30));
    // Real epochs, named by a right clock, are diffed: Y fires, and the baseline is theirs again.
    clock = epochTime(3).getTime();
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(3, [X, Y])), [
      { status: "firing", finding: firing(Y, epochTime(3)) },
    ]);
    assert.deepEqual(tracker.baselineEpoch(), epochTime(3));
    clock = epochTime(4).getTime();
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(4, [X])), [
      { status: "resolved", finding: firing(Y, epochTime(3)), endsAt: epochTime(4) },
    ]);
  });
  test("a baseline another catalog wrote is matched by name: what stays up keeps its start and publishes nothing, what is gone resolves under its old pk", async () => {
    await using one = await trackerLab(nc, "adopt");
    await using two = await trackerLab(nc, "adopt");
    const S1 = (pk: number): Row => ({ code: "jetstream-008", pk, name: "S1", severity: "warning" });
    const S2: Row = { code: "jetstream-008", pk: 2, name: "S2", severity: "warning" };
    const held: Row = {
      code: "server-007",
      type: "server",
      pk: 3,
      name: "n2",
      server: "n2",
      severity: "critical",
    };
    // Catalog two has check runs of its own, in which pk 2 is S9 and S1 is pk 5.
    await two.epoch(0, []);
    await one.epoch(1, []);
    {
      await using first = await one.tracker(nc, [], undefined, "catalog-one");
      await first.onEpoch(await one.epoch(2, [S1(1), S2, held]));
    }
    await using tracker = await two.tracker(nc, [], undefined, "catalog-two");
    assert.equal(tracker.start, "adopted");
    const S9: Row = { code: "jetstream-008", pk: 2, name: "S9", severity: "warning" };
    // n2 does not answer: its finding is held under catalog one's pk until it does.
    const t3 = await tracker.onEpoch(await two.epoch(3, [S1(5), S9], { answered: ["n1"] }));
    assert.deepEqual(t3, [
      { status: "resolved", finding: firing(S2, epochTime(2)), endsAt: epochTime(3) },
      { status: "firing", finding: firing(S9, epochTime(3)) },
    ]);
    assert.deepEqual(tracker.catalogFiring(), mapOf(firing(S1(5), epochTime(2)), firing(S9, epochTime(3))));
    assert.equal(tracker.moved(), true);
    assert.equal(tracker.firing().size, 3, "the held finding is still firing, under catalog one's pk");
    // A restart of catalog two loads it as its own now, the held entry still under catalog one's pk.
    await tracker[Symbol.asyncDispose]();
    await using again = await two.tracker(nc, [], undefined, "catalog-two");
    assert.equal(again.start, "stored");
    const t4 = await again.onEpoch(await two.epoch(4, [S1(5), S9]));
    assert.deepEqual(t4, [{ status: "resolved", finding: firing(held, epochTime(2)), endsAt: epochTime(4) }]);
    assert.equal(again.firing().size, 2);
  });

  test("an epoch whose baseline was saved before its transitions were published publishes them again when it comes back", async () => {
    await using lab = await trackerLab(nc, "again");
    await lab.epoch(0, []);
    {
      await using tracker = await lab.tracker(nc, [], undefined, "catalog");
      const t1 = await tracker.onEpoch(await lab.epoch(1, [X]));
      assert.deepEqual(t1, [{ status: "firing", finding: firing(X, epochTime(1)) }]);
      // The node stops here: the baseline is saved, nothing was published.
    }
    await using tracker = await lab.tracker(nc, [], undefined, "catalog");
    // Its marker comes back: the epoch is folded already and its checks read back.
    const t1 = await tracker.onEpoch(await lab.epoch(1, [X]));
    assert.deepEqual(t1, [{ status: "firing", finding: firing(X, epochTime(1)) }]);
    assert.deepEqual(await tracker.onEpoch(await lab.epoch(2, [X])), []);
  });
});
