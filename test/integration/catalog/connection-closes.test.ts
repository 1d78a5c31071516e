/**
 * The close fold against clocks and gaps: a close is recorded once, in the first epoch that
 * lists it, with its age measured on the server's own clock (CONNZ `now`) against a horizon
 * of five minutes or the time since the previous epoch.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyRetention, foldEpoch, type ScrapeReply } from "../../../src/catalog/index.ts";
import { catalogWith } from "../checks/check-harness.ts";
import { labReplies, marker, sourceReplies } from "./lab-epoch.ts";

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1);

/** The lab replies plus n1's closed list as n1 answers when its clock reads `nowMs`. */
function withClosed(nowMs: number, closes: readonly { cid: number; stopMs: number }[]): ScrapeReply[] {
  const n1 = sourceReplies("connz").find((r) => r.server === "n1")!;
  const body = structuredClone(n1.body) as { data: Record<string, unknown> };
  const connections = closes.map(({ cid, stopMs }) => ({
    cid,
    kind: "Client",
    start: new Date(stopMs - MINUTE).toISOString(),
    stop: new Date(stopMs).toISOString(),
    reason: "Slow Consumer (Pending Bytes)",
    name: `client-${cid}`,
  }));
  body.data = { ...body.data, now: new Date(nowMs).toISOString(), total: connections.length, connections };
  return [...labReplies(), { source: "connz_closed", server: "n1", body }];
}

/** Folds each [natsmon's epoch time, replies] in turn; returns the recorded closes by epoch. */
async function recorded(epochs: readonly (readonly [number, ScrapeReply[]])[]): Promise<string[]> {
  await using fixture = await catalogWith([]);
  for (const [i, [at, replies]] of epochs.entries()) {
    const epoch = new Date(at).toISOString();
    const result = await foldEpoch(fixture.catalog, {
      markerSeq: i + 1,
      marker: marker(epoch, replies),
      replies,
    });
    assert.equal(result.status, "folded");
  }
  return await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT strftime(c.epoch, '%H:%M') || ' cid ' || i.cid FROM hx.connection_closes c
         JOIN hx.connection_ident i USING (connection_pk) ORDER BY c.epoch, i.cid`,
      )
    )
      .getRowsJS()
      .map(([row]) => (typeof row === "string" ? row : "")),
  );
}

test("a server whose clock is six minutes behind natsmon's still has its new closes recorded", async () => {
  const serverNow = T0 - 6 * MINUTE;
  assert.deepEqual(await recorded([[T0, withClosed(serverNow, [{ cid: 7, stopMs: serverNow - 4_000 }])]]), [
    "00:00 cid 7",
  ]);
});

test("with epochs ten minutes apart, a close seven minutes old at the next epoch is recorded", async () => {
  const t1 = T0 + 10 * MINUTE;
  assert.deepEqual(
    await recorded([
      [T0, withClosed(T0, [])],
      [t1, withClosed(t1, [{ cid: 8, stopMs: t1 - 7 * MINUTE }])],
    ]),
    ["00:10 cid 8"],
  );
});

test("a server two hours ahead lists a close again after a 66-minute gap: it is recorded once", async () => {
  const ahead = 2 * 60 * MINUTE;
  const t1 = T0 + 66 * MINUTE;
  const close = { cid: 9, stopMs: T0 + ahead - 1_000 };
  assert.deepEqual(
    await recorded([
      [T0, withClosed(T0 + ahead, [close])],
      [t1, withClosed(t1 + ahead, [close])],
    ]),
    ["00:00 cid 9"],
  );
});

test("a close older than the horizon when first listed is not news", async () => {
  assert.deepEqual(await recorded([[T0, withClosed(T0, [{ cid: 10, stopMs: T0 - 6 * MINUTE }])]]), []);
});

/**
 * db.retention shorter than the horizon: retention deletes the epoch that recorded a close
 * while the server still lists it and the five-minute horizon still reaches it. It must not
 * be recorded a second time; a close within the retention still is.
 */
test("a close whose record retention deleted is not recorded again", async () => {
  const retentionMs = 3 * MINUTE;
  const t0 = Date.now() - 10 * MINUTE;
  const first = { cid: 11, stopMs: t0 - 1_000 };
  const later = { cid: 12, stopMs: t0 + 3 * MINUTE + 30_000 };
  await using fixture = await catalogWith([]);
  const recorded: string[] = [];
  // An epoch a minute, the server listing its closes each time; before each fold retention
  // runs as the node runs it (everything before the fold's time - retention goes).
  for (let m = 0; m <= 5; m++) {
    const at = t0 + m * MINUTE;
    await applyRetention(fixture.catalog, new Date(at - retentionMs));
    const replies = withClosed(
      at,
      [first, later].filter((c) => c.stopMs <= at),
    );
    const epoch = new Date(at).toISOString();
    const result = await foldEpoch(fixture.catalog, {
      markerSeq: m + 1,
      marker: marker(epoch, replies),
      replies,
      retention: { retentionMs, nowMs: at },
    });
    assert.equal(result.status, "folded");
    const rows = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          `SELECT i.cid FROM hx.connection_closes c JOIN hx.connection_ident i USING (connection_pk)
            WHERE c.epoch = $1::TIMESTAMPTZ ORDER BY i.cid`,
          [epoch],
        )
      ).getRowsJS(),
    );
    recorded.push(...rows.map(([cid]) => `minute ${m}: cid ${Number(cid)}`));
  }
  // cid 11's record (minute 0) is deleted at minute 4, when the horizon still reaches it.
  assert.deepEqual(recorded, ["minute 0: cid 11", "minute 4: cid 12"]);
});
