/**
 * opt-sys-010 and opt-sys-023 beyond their contract fixtures: which queue is named, and how
 * the WAL's severity follows the absolute and max_store thresholds. 2.10.26 RAFTZ replies on
 * the lab (fixtures/opt-sys.ts raftQueues): every node of ORDERS' group, on servers with a
 * max_store of 1 GiB unless edited.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { optSys010 } from "../../../src/checks/opt-sys/opt-sys-010.ts";
import { optSys023 } from "../../../src/checks/opt-sys/opt-sys-023.ts";
import { editReply } from "../catalog/lab-epoch.ts";
import { runFixture } from "./check-harness.ts";
import { raftQueues, wal } from "./fixtures/opt-sys.ts";

/** `replies` with `server`'s JetStream max_store (VARZ max_storage) set to 0: no limit to compare with. */
function noMaxStore(server: string, replies: ScrapeReply[]): ScrapeReply[] {
  return editReply(
    "varz",
    server,
    (body) => {
      (body.data.jetstream as { config: Record<string, unknown> }).config.max_storage = 0;
      return body;
    },
    replies,
  );
}

test("opt-sys-010 names the longest queue at a node's peak, counts the epochs over, and reports the latest length", async () => {
  const found = await runFixture(optSys010, [
    raftQueues({
      n1: { ipq_resp_len: 1500 },
      n2: { ipq_proposal_len: 2000, ipq_resp_len: 5 },
      n3: { ipq_entry_len: 1200 },
    }),
    raftQueues({ n3: { ipq_apply_len: 1100 } }),
  ]);
  assert.deepEqual(found.map((r) => [r.entity_key, r.queue, r.peak_len, r.epochs_over, r.queue_len]).sort(), [
    ["n1", "resp", 1500n, 1n, 0n],
    ["n2", "proposal", 2000n, 1n, 0n],
    ["n3", "entry", 1200n, 2n, 1100n],
  ]);
});

test("opt-sys-023 is critical from 80% of max_store and a warning from 50%, read at the node's latest epoch", async () => {
  const found = await runFixture(optSys023, [
    raftQueues({ n1: wal(900_000_000) }),
    raftQueues({ n2: wal(629_145_600), n3: wal(858_993_460) }),
  ]);
  assert.deepEqual(
    found.map((r) => [r.entity_key, r.severity, r.wal_bytes, r.max_store_bytes, r.pct_of_max_store]).sort(),
    [
      ["n2", "warning", 629_145_600n, 1_073_741_824n, 58.59],
      ["n3", "critical", 858_993_460n, 1_073_741_824n, 80],
    ],
  );
});

test("opt-sys-023 judges a server without max_store on the absolute sizes alone", async () => {
  const replies = noMaxStore(
    "n2",
    noMaxStore("n3", raftQueues({ n1: wal(5_000_000), n2: wal(53_687_091_200), n3: wal(10_737_418_240) })),
  );
  const found = await runFixture(optSys023, [replies]);
  assert.deepEqual(
    found.map((r) => [r.entity_key, r.severity, r.wal_bytes, r.max_store_bytes, r.pct_of_max_store]).sort(),
    [
      ["n2", "critical", 53_687_091_200n, null, null],
      ["n3", "warning", 10_737_418_240n, null, null],
    ],
  );
});
