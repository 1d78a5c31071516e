import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  afterWaiting,
  claimStep,
  lapseCause,
  refreshStep,
  type ClaimSeen,
} from "../../../src/bus/claim-rules.ts";
import type { RoleClaim } from "../../../src/protocol/index.ts";

const OURS = "INSTANCEOURS";
const claimOf = (node_id: string, instance: string): RoleClaim => ({
  node_id,
  instance,
  host: "h1",
  version: "0.0.1",
  since: "2026-01-01T00:00:00.000Z",
});
const A = claimOf("a", "INSTANCEA");
const held = (claim: RoleClaim | undefined, revision = 7): ClaimSeen => ({ kind: "held", revision, claim });
const FREE: ClaimSeen = { kind: "free" };

describe("claimStep: a starting node finding a role's key", () => {
  const rows: [string, ClaimSeen, Parameters<typeof claimStep>[2], ReturnType<typeof claimStep>][] = [
    ["the key is free (never claimed, released or lapsed): create it", FREE, undefined, { kind: "create" }],
    [
      "its own claim (a create stored, its reply lost): adopt it",
      held(claimOf("a", OURS)),
      undefined,
      { kind: "adopt", revision: 7 },
    ],
    [
      "another instance's claim, not asked yet: ask whether it runs",
      held(A),
      undefined,
      { kind: "probe", holder: A },
    ],
    ["the holder answers: refuse the role", held(A), "answers", { kind: "refuse", holder: A }],
    [
      "nothing listens for the holder (killed, stopped): take over at its revision",
      held(A),
      "gone",
      { kind: "take-over", revision: 7, from: A },
    ],
    [
      "the holder does not answer in time: wait for its claim to lapse or move",
      held(A),
      "silent",
      { kind: "wait", revision: 7, holder: A },
    ],
    [
      "a value no natsmon wrote: take over, nobody to ask",
      held(undefined),
      undefined,
      { kind: "take-over", revision: 7, from: undefined },
    ],
  ];
  for (const [name, seen, liveness, expected] of rows) {
    test(name, () => assert.deepEqual(claimStep(seen, OURS, liveness), expected));
  }

  test("the same node id in another process is another holder: it is asked, not adopted", () => {
    assert.deepEqual(claimStep(held(claimOf("a", "INSTANCEB")), OURS, undefined).kind, "probe");
  });
});

describe("afterWaiting: waiting on a silent holder", () => {
  test("the claim lapsed: create it", () => assert.deepEqual(afterWaiting(FREE, 7, A), { kind: "create" }));
  test("the claim did not move: go on waiting", () =>
    assert.deepEqual(afterWaiting(held(A, 7), 7, A), { kind: "wait" }));
  test("the claim moved (its holder refreshed it, or another node took it): refuse, naming who holds it now", () => {
    const B = claimOf("b", "INSTANCEB");
    assert.deepEqual(afterWaiting(held(B, 9), 7, A), { kind: "refuse", holder: B });
  });
});

describe("refreshStep: a holder whose rewrite was refused", () => {
  test("still its own claim at a newer revision: adopt that revision", () =>
    assert.deepEqual(refreshStep(held(claimOf("a", OURS), 12), OURS), { kind: "adopt", revision: 12 }));
  test("the claim lapsed and nobody took it: claim it again", () =>
    assert.deepEqual(refreshStep(FREE, OURS), { kind: "reclaim" }));
  test("another process holds it: the role is lost to it", () =>
    assert.deepEqual(refreshStep(held(A), OURS), { kind: "lost", holder: A }));
});

describe("lapseCause: why a claim this node held lapsed", () => {
  const refreshed = new Date("2026-01-01T00:00:00.000Z");
  const failing = new Date("2026-01-01T00:00:02.000Z");
  const restarted = new Date("2026-01-01T00:00:11.000Z");
  const cause = "it exited unexpectedly (killed by SIGKILL)";
  const restart = (at: Date) => ({ at, cause });
  const lapseMs = 10_000;
  const rows: [
    string,
    [refreshedAt: Date, failingSince: Date | undefined, sinkRestart: { at: Date; cause: string } | undefined],
    ReturnType<typeof lapseCause>,
  ][] = [
    [
      "natsmon restarted its embedded sink after the last stored refresh: the restart",
      [refreshed, failing, restart(restarted)],
      { kind: "sink-restarted", at: restarted, cause },
    ],
    [
      "refreshes failed, and the sink was restarted only before the last stored refresh: the sink took none",
      [refreshed, failing, restart(new Date("2025-12-31T23:59:00.000Z"))],
      { kind: "sink-unanswered", since: failing },
    ],
    [
      "refreshes failed on a sink natsmon never restarted (an external one, lost and regained): the sink took none",
      [refreshed, failing, undefined],
      { kind: "sink-unanswered", since: failing },
    ],
    [
      "no refresh failed and no restart: this node was late",
      [refreshed, undefined, undefined],
      { kind: "late" },
    ],
    [
      "no refresh failed, the sink restarted before the last stored refresh: this node was late",
      [refreshed, undefined, restart(new Date("2025-12-31T23:59:00.000Z"))],
      { kind: "late" },
    ],
    [
      "refreshes began to fail only after the claim had lapsed (the refresh a stalled node had in flight timed out): this node was late",
      [refreshed, new Date("2026-01-01T00:00:12.000Z"), undefined],
      { kind: "late" },
    ],
  ];
  for (const [name, given, expected] of rows) {
    test(name, () => assert.deepEqual(lapseCause(...given, lapseMs), expected));
  }
});
