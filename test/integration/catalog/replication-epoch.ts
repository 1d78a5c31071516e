/**
 * Replication fold tests: epochs built from recorded JSZ replies of the 2.9.10 lab
 * (fixtures jsz_*.json: faults and request variants), folded into a fresh catalog.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { foldEpoch, type ScrapeReply } from "../../../src/catalog/index.ts";
import { parseJsonExact } from "../../../src/lib/index.ts";
import { editReply, labEpoch, q, tempCatalog, type LabBody } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";
const FIXTURES = join(import.meta.dirname, "../../fixtures/scrape/lab-2.9.10");

/** The JSZ replies of a recorded fault or variant (fixtures jsz_*.json), as an epoch's replies. */
export function jszReplies(file: string): ScrapeReply[] {
  const { bodies } = parseJsonExact(readFileSync(join(FIXTURES, file), "utf8")) as { bodies: LabBody[] };
  return bodies.map((body) => ({ source: "jsz", server: body.server.name as string, body }));
}

/**
 * The recorded replies with n3 down, ORDERS and its consumer proc named by their raft groups
 * as 2.9.15+ names them with `raft: true` (S-R3F-orders, C-R3F-proc) in n1's and n2's JSZ:
 * no captured 2.9.10 sample has the names.
 */
export function raftNamedReplies(): ScrapeReply[] {
  let replies = jszReplies("jsz_n3_down.json");
  for (const server of ["n1", "n2"]) {
    replies = editReply(
      "jsz",
      server,
      (body) => {
        const orders = body.data.account_details[0]!.stream_detail.find((s) => s.name === "ORDERS")!;
        Object.assign(orders, {
          stream_raft_group: "S-R3F-orders",
          consumer_raft_groups: [{ name: "proc", raft_group: "C-R3F-proc" }],
        });
        return body;
      },
      replies,
    );
  }
  return replies;
}

/** A catalog with one epoch of `replies` (default: the lab's varz, jsz and healthz) folded without problems. */
export async function folded(replies?: ScrapeReply[]) {
  const t = await tempCatalog();
  const result = await foldEpoch(t.catalog, labEpoch(E1, 1, replies));
  assert.equal(result.status, "folded");
  assert.deepEqual((await q(t.catalog, "SELECT errors FROM hx.epochs"))[0]?.errors, []);
  return t;
}
