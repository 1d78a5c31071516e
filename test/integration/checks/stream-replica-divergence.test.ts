/**
 * jetstream-014 compares replicas only while the leader reports every one of them current
 * and online: a replica known to be behind is the business of the lag checks, not a
 * divergence; and only replicas whose own last sequence is the leader's, so a follower the
 * leader already calls current while it catches up is not one either. Real catalogs of edited
 * lab epochs (ORDERS: R3, leader n2).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { editStream, peerEntry } from "./fixtures/stream-edits.ts";

const check = CHECKS.find((c) => c.code === "jetstream-014")!;

/** ORDERS with n3 holding 20,000 messages against 30,000 on n1 and n2, and the leader saying `n3` about it. */
function diverged(n3: Record<string, unknown>): ScrapeReply[] {
  return editStream(
    "ORDERS",
    (d, server) => {
      d.state.messages = server === "n3" ? 20_000 : 30_000;
      if (server === "n2") Object.assign(peerEntry(d, "n3"), n3);
    },
    labReplies(),
  );
}

async function rows(replies: ScrapeReply[]): Promise<Record<string, unknown>[]> {
  await using fixture = await catalogWith([replies]);
  return await runCheck(fixture.catalog, check, fixture.epochs[0]!);
}

test("replicas all reported current yet 10,000 messages apart are a divergence, naming the short and the long replica", async () => {
  const [row, ...more] = await rows(diverged({ current: true }));
  assert.deepEqual(more, []);
  assert.equal(row?.entity_name, "hub/APP/ORDERS");
  assert.equal(row?.server, null, "a figure over the replicas' servers belongs to none of them");
  assert.equal(row?.leader, "n2");
  assert.deepEqual(
    [row?.min_server, row?.min_messages, row?.max_messages, row?.divergence, row?.replicas],
    ["n3", 20_000n, 30_000n, 10_000n, 3],
  );
});

test("a replica the leader reports not current, or offline, is not compared as a divergence", async () => {
  assert.deepEqual(await rows(diverged({ current: false, lag: 10_000 })), []);
  assert.deepEqual(await rows(diverged({ current: true, offline: true })), []);
});

test("a replica still catching up, whose own last sequence is behind the leader's, is not compared though the leader calls it current", async () => {
  // As after a frozen follower resumes: the leader says n3 is current with lag 0 while n3's
  // own copy ends at 400 of the leader's 1010 and holds far fewer messages.
  const catchingUp = editStream(
    "ORDERS",
    (d, server) => {
      if (server === "n3") d.state.last_seq = 400;
      d.state.messages = server === "n3" ? 0 : 30_000;
      if (server === "n2") Object.assign(peerEntry(d, "n3"), { current: true, lag: 0 });
    },
    labReplies(),
  );
  assert.deepEqual(await rows(catchingUp), []);
});

test("replicas at the leader's last sequence are still compared while another catches up", async () => {
  // n1 ends where the leader n2 does yet holds 10,000 messages fewer; n3 is behind.
  const [row, ...more] = await rows(
    editStream(
      "ORDERS",
      (d, server) => {
        if (server === "n3") d.state.last_seq = 400;
        d.state.messages = { n1: 20_000, n2: 30_000, n3: 0 }[server] ?? 0;
        if (server === "n2") Object.assign(peerEntry(d, "n3"), { current: true, lag: 0 });
      },
      labReplies(),
    ),
  );
  assert.deepEqual(more, []);
  assert.deepEqual(
    [row?.min_server, row?.min_messages, row?.max_server, row?.max_messages, row?.replicas],
    ["n1", 20_000n, "n2", 30_000n, 2],
  );
});
