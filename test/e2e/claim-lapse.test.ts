/**
 * A node that is itself late refreshing its role claim (its process stalled past the claim's
 * lapse while the sink ran on) still says so when it claims the role again: the restart of
 * an embedded sink, or a sink that took none of its refreshes, are named only when they are
 * what happened (test/integration/bus/role-claims-sink-restart.test.ts, test/e2e/disk-full.test.ts).
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";
import { Role } from "../../src/domain/index.ts";
import { ROLE_CLAIMS_BUCKET, roleClaimKey } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** SIGSTOP, and wait until the process is stopped: the signal lands a moment after kill() returns. */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  await waitFor(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `process ${pid} to be stopped`,
  });
}

test("a node stalled past its claim's lapse, on a sink that ran on, claims its role again and says it was late", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("lapse-sink");
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {id: cat, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(sink.url)}}`,
      "system: {id: east, roles: [catalog]}",
      "scraper: {interval: 1s}",
      "",
    ].join("\n"),
  );
  const node = spawnNatsmon(["run", "--config", file]);
  const nc = await connect({ servers: sink.url });
  try {
    await node.waitForUrl();
    const kv = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
    const key = roleClaimKey("east", Role.Catalog);
    const claimed = async () => (await kv.get(key))?.operation === "PUT";
    await waitFor(claimed, { message: "the catalog role claimed", timeoutMs: 30_000 });

    await freeze(node.child.pid!);
    await waitFor(async () => !(await claimed()), {
      message: "the stalled node's claim lapsing on the sink",
      timeoutMs: 60_000,
    });
    node.child.kill("SIGCONT");

    const log = () => node.stderr();
    await waitFor(() => /claimed again/.test(log()), {
      message: "the role claimed again",
      timeoutMs: 30_000,
    });
    assert.match(log(), /the role claim had lapsed \(this node was late refreshing it\); claimed again/);
    assert.doesNotMatch(log(), /embedded bus was restarted|sink took none of its refreshes/);
    assert.ok(await claimed(), "the claim is on the sink again");
    assert.equal(await node.kill("SIGTERM"), 0, log().slice(-3000));
  } finally {
    await node.kill("SIGKILL");
    await nc.close();
  }
});
