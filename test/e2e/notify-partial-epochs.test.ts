/**
 * A new endpoint's first delivery waits for an epoch scraped since start that observed
 * everything (README: "A new endpoint starts with what is firing now"): an epoch in which an
 * expected server did not answer may hold back findings that cleared while natsmon was down,
 * so it does not open the gate, however recent. A real 3-node JetStream cluster is monitored
 * with n3 stopped before natsmon starts (the meta group still names it, so it is expected);
 * server-011 fires on every answering server (threshold 0). While n3 is down the new webhook
 * endpoint gets nothing; once n3 is back the first complete epoch opens the gate, well before
 * the wait's two-minute bound, and the endpoint gets the firing set.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { WebhookMessage } from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { startHttpReceiver } from "../harness/http-receiver.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startTestCluster } from "../harness/start-nats-cluster.ts";
import { SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

const SYSTEM = "partial";
const OPENED = "an epoch scraped since start that observed everything was diffed";

interface LogLine {
  readonly level: number;
  readonly msg?: string;
  readonly epoch?: string;
}

const logLines = (node: NatsmonProcess) => jsonLogLines<LogLine>(node.stderr());

/** Epochs folded so far, oldest first, with whether n3 answered them in full. */
async function epochs(nc: NatsConnection): Promise<{ epoch: string; complete: boolean }[]> {
  return sqlQuery<{ epoch: string; complete: boolean }>(
    nc,
    SYSTEM,
    "SELECT epoch, list_contains(servers_answered, 'n3') AND coalesce(len(servers_partial), 0) = 0 AS complete " +
      "FROM hx.epochs WHERE list_contains(servers_expected, 'n3') ORDER BY epoch",
  );
}

const checkRuns = async (nc: NatsConnection) =>
  (await sqlQuery<{ n: number }>(nc, SYSTEM, "SELECT count(*)::INTEGER AS n FROM hx.check_runs"))[0]!.n;

test("a new endpoint's first delivery waits through epochs a stopped server did not answer, and goes on the first complete one", async () => {
  await using cluster = await startTestCluster({ size: 3, name: "partial" });
  const n3 = cluster.nodes.find((n) => n.name === "n3")!;
  await n3.stop();
  // A new meta leader, if n3 led: its JSZ names n3 as an offline peer, so n3 is expected.
  await cluster.waitForMeta();
  await using dir = await tempDir();
  await using receiver = await startHttpReceiver();
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      "sink: {embedded: {port: -1}}",
      "system:",
      `  id: ${SYSTEM}`,
      `  nats: {url: ${JSON.stringify(cluster.urls)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      "  check-thresholds: {server-011: {p_warn_percent: 0}}",
      "scraper: {interval: 1s}",
      "notifications:",
      `  webhook: [{name: new, url: ${JSON.stringify(`${receiver.url}/new`)}, subscriptions: ["server-011"]}]`,
    ].join("\n"),
  );
  const node = spawnNatsmon(["run", "--config", config]);
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    // Epochs n3 did not answer, diffed with server-011 firing for n1 and n2.
    const firing = async () =>
      (
        await sqlQuery<{ n: number }>(
          nc,
          SYSTEM,
          "SELECT count(*)::INTEGER AS n FROM hx.findings_firing WHERE code = 'server-011'",
        )
      )[0]!.n;
    await waitFor(async () => (await firing().catch(() => 0)) >= 2, {
      timeoutMs: 60_000,
      message: "server-011 firing for the servers that answer",
    });
    const runs = await checkRuns(nc);
    await waitFor(async () => (await checkRuns(nc)) >= runs + 3, {
      timeoutMs: 30_000,
      message: "three more checked epochs while n3 is down",
    });
    const partial = await epochs(nc);
    assert.ok(partial.length >= 3, JSON.stringify(partial));
    assert.deepEqual(
      partial.filter((e) => e.complete),
      [],
      "every epoch so far expected n3 and lacked it",
    );
    assert.deepEqual(
      logLines(node).filter((l) => l.msg?.includes(OPENED)),
      [],
      "no partial epoch opened the gate",
    );
    assert.equal(receiver.requests.filter((r) => r.path === "/new").length, 0, "nothing sent yet");

    await n3.start();
    const alerts = await waitFor(
      () => {
        const sent = receiver.requests
          .filter((r) => r.path === "/new")
          .flatMap((r) => (r.json() as WebhookMessage).alerts);
        return sent.length > 0 && sent;
      },
      { timeoutMs: 90_000, message: "the new endpoint's first delivery once n3 is back" },
    );
    assert.ok(
      alerts.every((a) => a.status === "firing" && a.labels.alertname === "server-011"),
      JSON.stringify(alerts),
    );
    // Opened by an epoch that observed everything, not by the wait running out.
    const lines = logLines(node);
    const opened = lines.findIndex((l) => l.msg?.includes(OPENED));
    assert.ok(opened >= 0, "the gate says an epoch observed everything");
    assert.deepEqual(
      lines.filter((l) => l.msg?.includes("observed everything (every expected server")),
      [],
      "the wait did not run out",
    );
    // And not before the first epoch n3 answered in full was folded.
    const first = (await epochs(nc)).find((e) => e.complete);
    assert.ok(first, "an epoch n3 answered in full");
    const folded = lines.findIndex(
      (l) => l.msg === "epoch folded" && Date.parse(l.epoch ?? "") === Date.parse(first.epoch),
    );
    assert.ok(folded >= 0 && folded < opened, `the gate opened after epoch ${first.epoch} was folded`);
  } catch (err) {
    process.stderr.write(node.stderr().slice(-5000));
    throw err;
  } finally {
    await nc.close();
    await node.kill("SIGTERM");
  }
});
