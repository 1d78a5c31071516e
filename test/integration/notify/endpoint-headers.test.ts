/**
 * A notification endpoint's own `headers` (a tenant header such as Mimir's X-Scope-OrgID, an
 * API key) reach a real HTTP receiver with every delivery, with `config check --connect`'s
 * probe, and with `natsmon notify test` spawned with the configuration file, beside natsmon's
 * own headers and its auth.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { deliver, probeEndpoint } from "../../../src/notify/index.ts";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { runNatsmon } from "../../harness/natsmon-process.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { endpoint } from "./notify-lab.ts";

describe("an endpoint's own headers", () => {
  let receiver: HttpReceiver;
  let sink: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    receiver = await startHttpReceiver();
    sink = await startTestServer("headers-sink");
    dir = await tempDir();
  });
  after(async () => {
    await receiver?.[Symbol.asyncDispose]();
    await sink?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("go with each delivery and the probe, beside natsmon's headers and its hmac signature", async () => {
    const e = endpoint({
      type: "alertmanager",
      name: "mimir",
      url: `${receiver.url}/alertmanager`,
      authType: "hmac",
      authToken: "key",
      headers: { "X-Scope-OrgID": "tenant-1", "X-Api-Key": "abc" },
    });
    const result = await deliver(
      e,
      { body: "[]", alertCount: 0, systems: ["east"] },
      { kind: "change", record: () => undefined, userAgent: "natsmon/test" },
    );
    assert.ok(result.ok);
    const posted = receiver.requests.find((r) => r.method === "POST")!;
    assert.equal(posted.path, "/alertmanager/api/v2/alerts");
    assert.equal(posted.headers["x-scope-orgid"], "tenant-1");
    assert.equal(posted.headers["x-api-key"], "abc");
    assert.equal(posted.headers["content-type"], "application/json");
    assert.equal(posted.headers["user-agent"], "natsmon/test");
    assert.match(posted.headers["x-hub-signature-256"] ?? "", /^sha256=[0-9a-f]{64}$/);

    await probeEndpoint(e, { userAgent: "natsmon/test" });
    const probed = receiver.requests.find((r) => r.method === "GET")!;
    assert.equal(probed.path, "/alertmanager/api/v2/status");
    assert.equal(probed.headers["x-scope-orgid"], "tenant-1");
  });

  test("natsmon notify test sends them as the configuration file gives them", async () => {
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        "node: {id: hdrs}",
        "system: {id: east}",
        "notifications:",
        "  webhook:",
        `    - {name: opsgenie, url: ${JSON.stringify(`${receiver.url}/cli`)}, subscriptions: ["*"],`,
        '       headers: {Authorization: "GenieKey 123", X-Team: nats}}',
        "",
      ].join("\n"),
    );
    const result = await runNatsmon(["notify", "test", "opsgenie", "--config", config, "--server", sink.url]);
    assert.equal(result.code, 0, result.stderr);
    const posted = receiver.requests.find((r) => r.path === "/cli")!;
    assert.equal(posted.headers.authorization, "GenieKey 123");
    assert.equal(posted.headers["x-team"], "nats");
  });
});
