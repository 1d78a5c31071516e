/**
 * server-009 counts restarts, as its parameter says: the distinct start times a server
 * reported within the hour, less the first (the start the hour began with, no restart).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { server009 } from "../../../src/checks/server/server-009.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { runFixture } from "./check-harness.ts";
import { restarted } from "./fixtures/server.ts";

const restarts = (starts: readonly string[]) => [labReplies(), ...starts.map((s) => restarted("w2", s))];

test("server-009 lets two restarts within an hour pass with the default of 2, and reports a third", async () => {
  assert.deepEqual(
    await runFixture(server009, restarts(["2026-11-22T11:03:00Z", "2026-11-22T11:04:00Z"])),
    [],
  );
  const rows = await runFixture(
    server009,
    restarts(["2026-11-22T11:03:00Z", "2026-11-22T11:04:00Z", "2026-11-22T11:05:00Z"]),
  );
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.start_times, r.restarts, r.max_restarts]),
    [["w2", 4n, 3n, 2n]],
  );
});

test("server-009 with p_max_restarts 0 reports a single restart, and not a server that never restarted", async () => {
  const params = { p_max_restarts: 0 };
  assert.deepEqual(await runFixture(server009, [labReplies(), labReplies()], params), []);
  const rows = await runFixture(server009, restarts(["2026-11-22T11:03:00Z"]), params);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.restarts]),
    [["w2", 1n]],
  );
});
