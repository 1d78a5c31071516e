/**
 * A node monitoring its embedded server whose configuration makes checks fire: server-011
 * (connections at or above 0% of max_connections) and server-003 (CPU at or above 0%) from
 * the first epoch, server-003 disabled (still run and stored, not graded), and jetstream-002
 * at 3 distinct subjects, so that a stream created during a test fires it as a transition.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

export interface ChecksNode extends AsyncDisposable {
  readonly node: NatsmonProcess;
  readonly url: string;
  readonly nc: NatsConnection;
}

/** Starts the node and waits for the checks to have run over a first epoch. */
export async function startChecksNode(): Promise<ChecksNode> {
  const dir = await tempDir();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(dir.path)}}`,
      "sink: {embedded: {port: -1}}",
      "system:",
      "  id: local",
      "  disabled-checks: [server-003]",
      "  check-thresholds:",
      "    server-003: {p_cpu_percent: 0}",
      "    server-011: {p_warn_percent: 0}",
      "    jetstream-002: {p_max_subjects: 3}",
      "scraper: {interval: 1s}",
    ].join("\n"),
  );
  const node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const nc = await connect({ servers: url });
  await waitFor(
    async () =>
      (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n > 0,
    { timeoutMs: 30_000, message: "the checks to run over a first epoch" },
  );
  return {
    node,
    url,
    nc,
    async [Symbol.asyncDispose]() {
      await nc.close();
      await node.kill("SIGTERM");
      await dir[Symbol.asyncDispose]();
    },
  };
}
