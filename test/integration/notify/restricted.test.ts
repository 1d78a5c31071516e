/**
 * What the notifier does with less: a disabled endpoint, and a sink user without the right to
 * create the delivery log (spec: Limits, "without JetStream, alerts are still sent but no log
 * is kept"; Authentication item 4).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { natsServerConfig, startNatsServer } from "../../../src/bus/index.ts";
import { checkDescription } from "../../../src/checks/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { startNotifier } from "../../../src/notify/index.ts";
import { nodeAssets } from "../../../src/protocol/index.ts";
import { startHttpReceiver } from "../../harness/http-receiver.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { FAST, endpoint, finding, fire, nextEpoch, startNotifyLab } from "./notify-lab.ts";

test("a disabled endpoint sends nothing while an enabled one gets the same epoch", async () => {
  await using lab = await startNotifyLab("disabled");
  await using receiver = await startHttpReceiver();
  await lab.start([
    endpoint({ name: "off", url: `${receiver.url}/off`, enabled: false }),
    endpoint({ name: "on", url: `${receiver.url}/on` }),
  ]);
  await lab.epoch([fire(finding(1))]);
  await waitFor(() => receiver.requests.some((r) => r.path === "/on"), {
    message: "the enabled endpoint's delivery",
  });
  assert.deepEqual(
    receiver.requests.filter((r) => r.path === "/off"),
    [],
  );
  assert.deepEqual(await lab.log("off"), []);
});

test("a sink user who may not create the delivery log still gets alerts out, with no log kept", async () => {
  await using dir = await tempDir();
  const node = "nolog";
  const workDir = join(dir.path, "nats");
  const logStream = nodeAssets(node).deliveryLogStream;
  const config = natsServerConfig({
    serverName: "restricted",
    host: "127.0.0.1",
    port: -1,
    workDir,
    storeDir: join(dir.path, "js"),
  });
  // One account with JetStream; its only user may do anything but create the delivery log.
  const server = await startNatsServer({
    workDir,
    configText: [
      config,
      "accounts {",
      "  APP: {",
      "    jetstream: enabled",
      `    users: [{user: mon, password: mon, permissions: {publish: {deny: ["$JS.API.STREAM.CREATE.${logStream}"]}}}]`,
      "  }",
      "}",
      "",
    ].join("\n"),
  });
  try {
    await using receiver = await startHttpReceiver();
    const nc = await connect({ servers: server.clientUrl, user: "mon", pass: "mon" });
    try {
      const notifier = await startNotifier({
        nc,
        nodeId: node,
        replicas: 1,
        catalogSystems: ["east"],
        endpoints: [endpoint({ name: "hook", url: receiver.url })],
        disabledChecks: new Map(),
        body: { describe: checkDescription, externalUrl: undefined, systemCount: 1 },
        userAgent: "natsmon-test",
        log: silentLogger(),
        timing: FAST,
      });
      try {
        await notifier.enqueue("east", nextEpoch(), [fire(finding(1))]);
        await notifier.epochDiffed("east");
        const [req] = await receiver.waitForRequests(1);
        assert.equal((req!.json() as { alerts: unknown[] }).alerts.length, 1);
      } finally {
        await notifier[Symbol.asyncDispose]();
      }
      const names: string[] = [];
      for await (const name of (await jetstreamManager(nc)).streams.names()) names.push(name);
      assert.ok(names.includes(nodeAssets(node).outboxStream));
      assert.ok(!names.includes(logStream), "no delivery log was created");
    } finally {
      await nc.close();
    }
  } finally {
    await server[Symbol.asyncDispose]();
  }
});
