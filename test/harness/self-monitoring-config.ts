import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkCatalogue } from "../../src/checks/index.ts";
import { loadConfig, type Config } from "../../src/config/index.ts";
import { SYS_USER } from "./start-nats-server.ts";

/**
 * The configuration of a node `cat` on the external sink `sinkUrl` (a harness server) that
 * monitors that same server as system `local` through its system user, scraping every
 * `interval`, its data dir in `dir`: written to a file and loaded as `natsmon run --config`
 * would, for tests that start the node in process.
 */
export async function selfMonitoringConfig(options: {
  dir: string;
  sinkUrl: string;
  interval: string;
}): Promise<Config> {
  const file = join(options.dir, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {id: cat, data-dir: ${JSON.stringify(join(options.dir, "data"))}}`,
      `sink: {url: ${JSON.stringify(options.sinkUrl)}}`,
      "system:",
      "  id: local",
      `  nats: {url: ${JSON.stringify(options.sinkUrl)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      `scraper: {interval: ${options.interval}}`,
    ].join("\n"),
  );
  const loaded = await loadConfig({ file, env: {}, checks: checkCatalogue() });
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return loaded.config;
}
