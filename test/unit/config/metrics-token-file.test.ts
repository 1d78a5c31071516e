/**
 * node.metrics-token-file as `natsmon run` and `natsmon config check` load it: the file is
 * checked by its path at start-up, and it needs node.metrics-listen.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig, type ConfigResult } from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

async function load(dir: string, node: string, env: Record<string, string> = {}): Promise<ConfigResult> {
  const file = join(dir, "natsmon.yaml");
  await writeFile(file, [`node: {${node}}`, "system: {id: east}", ""].join("\n"));
  return loadConfig({ file, env });
}
const errors = (r: ConfigResult): string[] => (r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`));

test("a token file beside metrics-listen is taken, from the file or the environment", async () => {
  await using dir = await tempDir();
  const token = join(dir.path, "metrics.token");
  await writeFile(token, "s3cret-token\n");
  const fromFile = await load(dir.path, `metrics-listen: "127.0.0.1:0", metrics-token-file: ${token}`);
  assert.ok(fromFile.ok, errors(fromFile).join("\n"));
  assert.equal(fromFile.config.node.metricsTokenFile, token);
  const fromEnv = await load(dir.path, `metrics-listen: "127.0.0.1:0"`, {
    NATSMON_NODE_METRICS_TOKEN_FILE: token,
  });
  assert.ok(fromEnv.ok, errors(fromEnv).join("\n"));
  assert.equal(fromEnv.config.node.metricsTokenFile, token);
});

test("a token file that is missing, empty or holds spaces, or one without metrics-listen, is refused by its path", async () => {
  await using dir = await tempDir();
  const empty = join(dir.path, "empty.token");
  await writeFile(empty, "\n");
  const spaced = join(dir.path, "spaced.token");
  await writeFile(spaced, "two words\n");
  const cases: [string, RegExp][] = [
    [join(dir.path, "missing.token"), /^node\.metrics-token-file: .*does not exist/],
    [empty, /^node\.metrics-token-file: .*holds no token/],
    [spaced, /^node\.metrics-token-file: .*visible ASCII characters without spaces/],
  ];
  for (const [file, message] of cases) {
    const result = await load(dir.path, `metrics-listen: "127.0.0.1:0", metrics-token-file: ${file}`);
    assert.match(errors(result).join("\n"), message, file);
  }
  const token = join(dir.path, "metrics.token");
  await writeFile(token, "s3cret-token\n");
  const alone = await load(dir.path, `metrics-token-file: ${token}`);
  assert.match(
    errors(alone).join("\n"),
    /^node\.metrics-token-file: .*served only with node\.metrics-listen/m,
  );
});
