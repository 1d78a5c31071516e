import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const errorsOf = async (text: string) => {
  await using dir = await tempDir();
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(file, text);
  const result = await loadConfig({ file });
  assert.equal(result.ok, false);
  return result.ok ? [] : result.errors.map((e) => `${e.path}: ${e.message}`);
};

test("each unknown key is named on its own, with the known key it is likely a typo of", async () => {
  const errors = await errorsOf(
    [
      "nodes: {id: a}",
      "zzz: 1",
      "system: {id: x, rolez: [scrape], nats: {url: nats://a:4222, passwd: x}}",
      "systems_: []",
      "db: {query-stream: {windoe: 3}}",
      "",
    ].join("\n"),
  );
  assert.deepEqual(errors.sort(), [
    "db.query-stream.windoe: is not a known setting (did you mean window?)",
    "nodes: is not a known setting (did you mean node?)",
    "system.nats.passwd: is not a known setting (did you mean password?)",
    "system.rolez: is not a known setting (did you mean roles?)",
    "systems_: is not a known setting (did you mean systems?)",
    "zzz: is not a known setting",
  ]);
});

test("a file that cannot be read, or is no YAML, is said so in words", async () => {
  const missing = await loadConfig({ file: "/nonexistent/natsmon.yaml" });
  assert.deepEqual(missing.ok ? [] : missing.errors, [
    {
      path: "(file)",
      message:
        "cannot read /nonexistent/natsmon.yaml: it does not exist (give the path of natsmon's YAML file with --config or NATSMON_CONFIG)",
    },
  ]);
  await using dir = await tempDir();
  const directory = await loadConfig({ file: dir.path });
  assert.deepEqual(directory.ok ? [] : directory.errors.map((e) => e.message), [
    `cannot read ${dir.path}: it is a directory, not a file`,
  ]);
  const broken = await errorsOf("node: {id: a\n");
  assert.equal(broken.length, 1);
  assert.match(broken[0]!, /^\(file\): .* at line \d+, column \d+$/);
});
