import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkCatalogue } from "../../src/checks/index.ts";
import { loadConfig, type Config } from "../../src/config/index.ts";
import { SYS_USER } from "./start-nats-server.ts";

/**
 * The configuration of a node `id` on the external sink `sinkUrl` (a harness server) that
 * serves one role of system `local`, which monitors that same server through its system user,
 * its data dir `<dir>/<id>`; `scraper` is the scraper's settings (flow YAML). Written to a file
 * and loaded as `natsmon run --config` would, for tests that start a scrape node and a catalog
 * node in process.
 */
export async function splitNodeConfig(options: {
  dir: string;
  sinkUrl: string;
  id: string;
  role: "scrape" | "catalog";
  scraper: string;
}): Promise<Config> {
  const { dir, sinkUrl, id } = options;
  const file = join(dir, `${id}.yaml`);
  await writeFile(
    file,
    [
      `node: {id: ${id}, data-dir: ${JSON.stringify(join(dir, id))}}`,
      `sink: {url: ${JSON.stringify(sinkUrl)}}`,
      "system:",
      "  id: local",
      `  roles: [${options.role}]`,
      `  nats: {url: ${JSON.stringify(sinkUrl)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      `scraper: ${options.scraper}`,
    ].join("\n"),
  );
  const loaded = await loadConfig({ file, env: {}, checks: checkCatalogue() });
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return loaded.config;
}
