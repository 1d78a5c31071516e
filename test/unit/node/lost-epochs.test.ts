import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { lostEpochsMessage, markerLoss } from "../../../src/node/lost-epochs.ts";
import type { CommitMarker } from "../../../src/protocol/index.ts";

function marker(
  epoch: string,
  chain: Pick<CommitMarker, "commit_no" | "prev_commit_seq" | "prev_epoch">,
): CommitMarker {
  return {
    system_id: "east",
    epoch,
    finished_at: epoch,
    parts: [],
    servers_expected: [],
    servers_answered: [],
    unsupported: [],
    errors: [],
    ...chain,
  };
}

const AFTER = { seq: 40, no: 7, epoch: "2026-01-01T00:00:00.000Z" };

describe("markerLoss: commit markers the scrape stream dropped before the catalog read them", () => {
  test("a marker whose predecessor is the last one handed out: nothing lost", () =>
    assert.equal(
      markerLoss(AFTER, 52, marker("2026-01-01T00:00:10.000Z", { commit_no: 8, prev_commit_seq: 40 })),
      undefined,
    ));
  test("a marker whose predecessor was never handed out: the gap in numbers is how many were lost", () =>
    assert.deepEqual(
      markerLoss(
        AFTER,
        90,
        marker("2026-01-01T00:00:40.000Z", {
          commit_no: 11,
          prev_commit_seq: 78,
          prev_epoch: "2026-01-01T00:00:30.000Z",
        }),
      ),
      { count: 3, after: AFTER, lastLost: { seq: 78, epoch: "2026-01-01T00:00:30.000Z" } },
    ));
  test("the number of the last marker handed out not known (not folded in this file): at least one, count unknown", () =>
    assert.deepEqual(
      markerLoss({ seq: 40 }, 90, marker("2026-01-01T00:00:40.000Z", { commit_no: 11, prev_commit_seq: 78 })),
      {
        count: undefined,
        after: { seq: 40 },
        lastLost: { seq: 78, epoch: undefined },
      },
    ));
  test("a marker handed out again (a redelivery, a hand-back): not judged again", () =>
    assert.equal(
      markerLoss(AFTER, 40, marker("2026-01-01T00:00:00.000Z", { commit_no: 7, prev_commit_seq: 30 })),
      undefined,
    ));
  test("the start of a chain (a scrape side that found no marker to follow, after being down): nothing lost", () =>
    assert.equal(markerLoss(AFTER, 90, marker("2026-01-01T03:00:00.000Z", { commit_no: 1 })), undefined));
  test("a marker of an older release, with no chain: nothing judged", () =>
    assert.equal(markerLoss(AFTER, 90, marker("2026-01-01T03:00:00.000Z", {})), undefined));
  test("a predecessor at or past the marker itself (another stream's, created again): nothing judged", () =>
    assert.equal(
      markerLoss({ seq: 2 }, 5, marker("2026-01-01T03:00:00.000Z", { commit_no: 9, prev_commit_seq: 4000 })),
      undefined,
    ));
});

describe("lostEpochsMessage", () => {
  const limits = { maxAgeMs: 6 * 3_600_000, maxBytes: 40_000 };
  test("names the system, the stream, how many and which epochs, the limits as this node sets them and which to raise", () => {
    const text = lostEpochsMessage(
      "east",
      { count: 3, after: AFTER, lastLost: { seq: 78, epoch: "2026-01-01T00:00:30.000Z" } },
      { seq: 90, epoch: "2026-01-01T00:00:40.000Z" },
      limits,
      Date.parse("2026-01-01T00:01:00.000Z"),
    );
    assert.match(
      text,
      /^3 epochs of system east will never be folded: the scrape stream MON_SCRAPE_east dropped their commit markers/,
    );
    assert.match(
      text,
      /the epochs after epoch 2026-01-01T00:00:00.000Z \(marker 40\), the last folded or set aside, up to epoch 2026-01-01T00:00:30.000Z \(marker 78\)/,
    );
    assert.match(
      text,
      /max_bytes 39\.1KiB \(scraper\.stream\.max-bytes\) and max_age 6h \(scraper\.stream\.max-age\), as this node sets them/,
    );
    assert.match(text, /raise scraper\.stream\.max-bytes/);
  });
  test("lost past the max age: raise max-age; count unknown: at least one", () => {
    const text = lostEpochsMessage(
      "east",
      { count: undefined, after: { seq: 40 }, lastLost: { seq: 78, epoch: "2026-01-01T00:00:30.000Z" } },
      { seq: 90, epoch: "2026-01-01T07:00:40.000Z" },
      { maxAgeMs: 6 * 3_600_000, maxBytes: -1 },
      Date.parse("2026-01-01T07:01:00.000Z"),
    );
    assert.match(text, /^At least one epoch of system east/);
    assert.match(text, /past the stream's max age: raise scraper\.stream\.max-age/);
  });
});
