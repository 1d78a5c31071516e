/**
 * opt-idle-005 on servers up for a month: an account that first appears late in the
 * window, with no traffic, has been idle only since then, not since the servers started (it
 * may be new); an account known from the first epoch with nothing on it is idle since the
 * servers started.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS } from "../../../src/checks/index.ts";
import { LAB_SERVERS } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { withAccounts } from "./fixtures/accounts.ts";
import { edit } from "./fixtures/server.ts";

type Json = Record<string, unknown>;
const idle005 = CHECKS.find((c) => c.code === "opt-idle-005")!;

/** Every server started on 2025-12-01, a month before the fixture epochs. */
function monthOld(replies: ScrapeReply[]): ScrapeReply[] {
  for (const s of LAB_SERVERS)
    replies = edit("varz", s, (d) => void (d.start = "2025-12-01T00:00:00Z"), replies);
  return replies;
}

/** n1's account STATZ also lists NEWACC, with no connection and no traffic ever. */
function withNewAccount(replies: ScrapeReply[]): ScrapeReply[] {
  return edit(
    "accstatz",
    "n1",
    (data) => {
      const list = data.account_statz as Json[];
      const other = structuredClone(list.find((a) => a.acc === "OTHER")!);
      Object.assign(other, { acc: "NEWACC", name: "NEWACC", conns: 0, total_conns: 0, leafnodes: 0 });
      for (const k of ["sent", "received"])
        if (other[k]) Object.assign(other[k] as Json, { msgs: 0, bytes: 0 });
      list.push(other);
    },
    replies,
  );
}

test("opt-idle-005 counts a newly seen account idle from when it was first seen, not from the servers' start", async () => {
  await using f = await catalogWith([
    monthOld(withAccounts()),
    withNewAccount(monthOld(withAccounts())),
    withNewAccount(monthOld(withAccounts())),
  ]);
  const names = async (params: Record<string, number>) =>
    (await runCheck(f.catalog, idle005, f.epochs.at(-1)!, params, f.epochs[0])).map((r) => r.entity_name);
  assert.ok(!(await names({})).includes("NEWACC"), "10 s of silence is not a day");
  assert.ok((await names({ p_threshold_secs: 5 })).includes("NEWACC"), "it has been idle since it appeared");
});
