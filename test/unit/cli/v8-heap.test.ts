import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const MODULE = fileURLToPath(new URL("../../../src/cli/v8-heap.ts", import.meta.url));

/**
 * Mark-compacts in a fresh process that churns 1 GiB through short-lived 1 MiB arrays,
 * as a stream reader does through nats.js's message buffers (a few alive at a time).
 */
async function markCompacts(tuned: boolean): Promise<number> {
  const script = [
    tuned ? `import ${JSON.stringify(MODULE)};` : "",
    "const live = [];",
    "for (let i = 0; i < 1024; i++) {",
    "  const bytes = new Uint8Array(1 << 20); bytes[0] = 1; live.push(bytes);",
    "  if (live.length > 8) live.shift();",
    "}",
  ].join("\n");
  const { stdout } = await promisify(execFile)(process.execPath, [
    "--trace-gc",
    "--input-type=module",
    "-e",
    script,
  ]);
  return stdout.split("\n").filter((line) => line.includes("Mark-Compact")).length;
}

test("v8-heap: short-lived large arrays no longer force full GCs", async () => {
  const untuned = await markCompacts(false);
  const tuned = await markCompacts(true);
  // V8's default: a full GC each time off-heap memory grows by 64 MB.
  assert.ok(untuned >= 4, `untuned: ${untuned} mark-compacts`);
  assert.ok(tuned < untuned / 2, `tuned: ${tuned} mark-compacts, untuned ${untuned}`);
});

test("v8-heap: npm run natsmon, npm start, the entry's shebang and bench:query start node with the same V8 flags", async () => {
  const root = new URL("../../../", import.meta.url);
  const pkg = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as {
    scripts: Record<string, string>;
  };
  const script = pkg.scripts.natsmon!.split(" ");
  assert.equal(script[0], "node");
  assert.equal(script.at(-1), "src/main.ts");
  const shebang = (await readFile(new URL("src/main.ts", root), "utf8")).split("\n")[0]!;
  assert.equal(shebang, `#!/usr/bin/env -S ${script.slice(0, -1).join(" ")}`);
  assert.ok(script.includes("--initial-heap-size=128"), pkg.scripts.natsmon);
  // npm start runs the node with them, as the installed binary does.
  assert.ok(
    pkg.scripts.start!.endsWith(`&& ${script.slice(0, -1).join(" ")} src/main.ts run`),
    pkg.scripts.start,
  );
  // bench:query's in-process side runs with them too, or its baseline is slowed (bench/query.ts).
  assert.equal(pkg.scripts["bench:query"], `${script.slice(0, -1).join(" ")} bench/query.ts`);
  // The flag is one node accepts at start-up.
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...script.slice(1, -1),
    "-p",
    "require('node:v8').getHeapStatistics().heap_size_limit > 0",
  ]);
  assert.equal(stdout.trim(), "true");
});
