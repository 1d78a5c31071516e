import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../../src/config/index.ts";

const DIR = fileURLToPath(new URL("../../fixtures/config/", import.meta.url));

/** Each invalid fixture's first line says what it must fail with: `# expect: <path>: <fragment>`. */
async function expectation(file: string): Promise<{ path: string; fragment: string } | undefined> {
  const first = (await readFile(DIR + file, "utf8")).split("\n")[0] ?? "";
  const match = /^# expect: (.+?): (.*)$/.exec(first);
  return match ? { path: match[1]!, fragment: match[2]!.trim() } : undefined;
}

describe("config fixtures, one per validation error", async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith(".yaml")).sort();
  for (const file of files) {
    const expected = await expectation(file);
    if (file.startsWith("valid-")) {
      test(`${file} is accepted`, async () => {
        const result = await loadConfig({ file: DIR + file, hostname: "host" });
        assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.errors));
      });
      continue;
    }
    test(`${file} is refused naming ${expected?.path ?? "(missing # expect line)"}`, async () => {
      assert.ok(expected, `${file} has no '# expect: <path>: <fragment>' first line`);
      const result = await loadConfig({ file: DIR + file, hostname: "host" });
      assert.equal(result.ok, false, `${file} was accepted`);
      if (result.ok) return;
      const hit = result.errors.find(
        (e) => e.path === expected.path && e.message.includes(expected.fragment),
      );
      assert.ok(
        hit,
        `no issue "${expected.path}: …${expected.fragment}…" in ${JSON.stringify(result.errors)}`,
      );
    });
  }
});
