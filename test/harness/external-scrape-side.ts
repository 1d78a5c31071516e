import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/nats-core";
import { loadConfig } from "../../src/config/index.ts";
import { noMetrics, type Logger } from "../../src/lib/index.ts";
import { createScrapeSide, type ScrapeSide } from "../../src/node/scrape-side.ts";
import { SYS_USER } from "./start-nats-server.ts";

/**
 * A scrape side of system `systemId` built from a real configuration file: it scrapes
 * `monitoredUrl` (a harness server, through its system user) once an hour unless triggered,
 * and writes to the external sink `sink` (URL and natsmon's connection to it). Not started.
 */
export async function externalScrapeSide(options: {
  dir: string;
  systemId: string;
  monitoredUrl: string;
  sink: { url: string; nc: NatsConnection };
  log: Logger;
}): Promise<ScrapeSide> {
  const file = join(options.dir, `${options.systemId}.yaml`);
  await writeFile(
    file,
    [
      "system:",
      `  id: ${options.systemId}`,
      `  nats: {url: ${JSON.stringify(options.monitoredUrl)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      `sink: {url: ${JSON.stringify(options.sink.url)}}`,
      "scraper: {interval: 1h}",
    ].join("\n"),
  );
  const loaded = await loadConfig({ file });
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return createScrapeSide({
    sink: options.sink.nc,
    sinkSystem: undefined,
    externalSink: true,
    system: loaded.config.systems[0]!,
    nodeId: `${options.systemId}-node`,
    metrics: noMetrics(),
    log: options.log,
  });
}
