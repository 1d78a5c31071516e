/**
 * A sink that stops answering between a commit marker's delivery and the read of its parts
 * (a stream leader lost or frozen mid-fold): the epoch is not folded as if its parts were
 * gone, but retried, and folded whole once the sink answers again. The node runs in this
 * process so that a fault hook can freeze the sink (SIGSTOP) at exactly that point; the sink
 * is a real nats-server, the catalog a real DuckDB file.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { startNode } from "../../src/node/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { selfMonitoringConfig } from "../harness/self-monitoring-config.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

test("an epoch whose parts the sink does not hand over is retried, not folded empty, and folded whole once the sink is back", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("sink");
  // One epoch, scraped at start.
  const config = await selfMonitoringConfig({ dir: dir.path, sinkUrl: sink.url, interval: "1h" });
  const lines: string[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
  const logged = (text: string) => lines.some((line) => line.includes(text));
  let frozen = false;
  await using node = await startNode(config, {
    log,
    faults: {
      // The first marker's parts are read from a sink that has just stopped answering.
      beforeReadParts: async () => {
        if (frozen) return;
        frozen = true;
        await freeze(sink.process.pid);
      },
    },
  });
  try {
    await waitFor(() => logged("could not be read from the sink") || logged('"epoch folded"'), {
      timeoutMs: 60_000,
      message: "the first fold to end, one way or the other",
    });
  } finally {
    sink.process.kill("SIGCONT");
  }
  assert.ok(node.systems.length > 0);
  const nc = await connect({ servers: sink.url });
  try {
    const [epoch] = await waitFor(
      async () => {
        const rows = await sqlQuery<{ epoch: string; errors: string[]; servers_partial: string[] }>(
          nc,
          "local",
          "SELECT epoch::VARCHAR AS epoch, errors, servers_partial FROM hx.epochs",
        );
        return rows.length > 0 && rows;
      },
      { timeoutMs: 60_000, message: "the epoch to be folded" },
    );
    assert.deepEqual(
      epoch!.errors.filter((e) => /no longer in the stream/.test(e)),
      [],
      "no part of the epoch was taken for gone",
    );
    assert.deepEqual(epoch!.servers_partial, []);
    const [stats] = await sqlQuery<{ n: number }>(
      nc,
      "local",
      "SELECT count(*)::INTEGER AS n FROM hx.server_stats",
    );
    assert.equal(stats!.n, 1, "the sink's own VARZ, JSZ and HEALTHZ were folded");
    assert.ok(logged("the epoch is not folded without it and is retried"), lines.join(""));
  } finally {
    await nc.close();
  }
});
