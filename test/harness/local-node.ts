import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { sqlQuery } from "./api-client.ts";
import { spawnNatsmon, type NatsmonProcess } from "./natsmon-process.ts";

/** How many rows a catalog table of a system holds now. */
export async function countRows(nc: NatsConnection, system: string, table: string): Promise<number> {
  return (await sqlQuery<{ n: number }>(nc, system, `SELECT count(*) AS n FROM ${table}`))[0]!.n;
}

/**
 * Spawns `natsmon run` on the embedded default (OS-chosen port, data under `dir`, system
 * `local` scraped every second) with `yaml` lines added to its configuration, and connects to
 * its bus. The caller waits for what it needs (epochs, check runs) and disposes both.
 */
export async function spawnLocalNode(
  dir: string,
  yaml: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<{ node: NatsmonProcess; nc: NatsConnection }> {
  const config = join(dir, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(join(dir, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "scraper: {interval: 1s}",
      ...yaml,
    ].join("\n"),
  );
  const node = spawnNatsmon(["run", "--config", config], env);
  return { node, nc: await connect({ servers: await node.waitForUrl() }) };
}
