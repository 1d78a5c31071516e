import { test } from "node:test";
import assert from "node:assert/strict";
import { createMetrics } from "../../../src/lib/index.ts";

/** The natsmon_findings_firing samples of the exposition: `code severity system` → value. */
async function firing(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { text } = await metrics.render();
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.startsWith("natsmon_findings_firing{"))
      .map((l) => {
        const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(l)?.[1];
        return [`${label("code")} ${label("severity")} ${label("system")}`, Number(l.split(" ").at(-1))];
      }),
  );
}

test("natsmon_findings_firing counts each system's firing set by check and severity, and drops to 0 what stopped", async () => {
  const metrics = createMetrics("n1");
  metrics.firing("a", [
    { code: "server-011", severity: "warning" },
    { code: "jetstream-002", severity: "warning" },
    { code: "jetstream-002", severity: "warning" },
    { code: "jetstream-002", severity: "critical" },
  ]);
  metrics.firing("b", [{ code: "server-011", severity: "critical" }]);
  assert.deepEqual(await firing(metrics), {
    "server-011 warning a": 1,
    "jetstream-002 warning a": 2,
    "jetstream-002 critical a": 1,
    "server-011 critical b": 1,
  });
  // The next diff of system a: one stream resolved, one changed severity, server-011 cleared.
  metrics.firing("a", [{ code: "jetstream-002", severity: "warning" }]);
  assert.deepEqual(await firing(metrics), {
    "server-011 warning a": 0,
    "jetstream-002 warning a": 1,
    "jetstream-002 critical a": 0,
    "server-011 critical b": 1,
  });
  const { text } = await metrics.render();
  assert.match(text, /^# TYPE natsmon_findings_firing gauge$/m);
  assert.match(text, /^natsmon_findings_firing\{[^}]*node_id="n1"[^}]*\} /m);
});
