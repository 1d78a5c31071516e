/**
 * ops.pprof on a sink whose max_payload (nats-server's 1 MB default) no heap snapshot fits: the
 * snapshot goes to the object store MON_PPROF, and the reply names it; a short CPU profile still
 * comes in the reply. Where natsmon's user may not publish to the object store either, 413.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { startNatsServer } from "../../src/bus/index.ts";
import { nodeSubjects, type PprofReply } from "../../src/protocol/index.ts";
import { callApi } from "../harness/api-client.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { readProfile } from "../harness/profile.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";

test("a heap snapshot over the sink's max_payload is stored in MON_PPROF and named in the reply", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("pprof");
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: prof, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(sink.url)}, user: ${APP_USER.user}, password: ${APP_USER.password}}`,
      `system: {id: profsys, nats: {url: ${JSON.stringify(sink.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}}`,
      "",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  await node.waitForUrl();
  const nc = await connect({ servers: sink.url, user: APP_USER.user, pass: APP_USER.password });
  try {
    const max = nc.info!.max_payload;
    assert.equal(max, 1024 * 1024, "nats-server's default max_payload");
    const subjects = nodeSubjects("prof");

    const cpu = await callApi<PprofReply>(nc, subjects.opsPprof, { type: "cpu", duration_ms: 100 });
    assert.equal(cpu.encoding, "gzip+base64", "a short CPU profile fits in the reply");
    assert.ok((await readProfile<{ nodes: unknown[] }>(nc, cpu)).nodes.length > 0);

    const heap = await callApi<PprofReply>(nc, subjects.opsPprof, { type: "heap" }, 120_000);
    assert.equal(heap.encoding, "gzip");
    assert.equal(heap.object?.bucket, "MON_PPROF");
    assert.match(heap.object.name, /^prof-heap-\d{4}-\d\d-\d\dT\d{6}\.\d{3}Z\.heapsnapshot\.gz$/);
    assert.ok(heap.object.size > max, `${heap.object.size} bytes stored, more than one message carries`);
    const snapshot = await readProfile<{ snapshot: { node_count: number } }>(nc, heap);
    assert.ok(snapshot.snapshot.node_count > 1000);
  } finally {
    await nc.close();
  }
});

test("a heap snapshot that neither fits a reply nor may be stored answers 413, naming the grant", async () => {
  await using dir = await tempDir();
  const workDir = join(dir.path, "nats");
  // natsmon's user may do everything but publish to the object store.
  await using sink = await startNatsServer({
    workDir,
    configText: [
      "listen: 127.0.0.1:-1",
      `ports_file_dir: ${JSON.stringify(workDir)}`,
      `jetstream { store_dir: ${JSON.stringify(join(workDir, "js"))} }`,
      "accounts {",
      "  SYS: { users: [{user: sys, password: sys}] }",
      '  MON: { jetstream: enabled, users: [{user: natsmon, password: natsmon, permissions: {publish: {deny: ["$O.MON_PPROF.>"]}}}, {user: app, password: app}] }',
      "}",
      "system_account: SYS",
      "",
    ].join("\n"),
  });
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: prof, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(sink.clientUrl)}, user: natsmon, password: natsmon}`,
      `system: {id: profsys, nats: {url: ${JSON.stringify(sink.clientUrl)}, user: sys, password: sys}}`,
      "",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  await node.waitForUrl();
  const nc = await connect({ servers: sink.clientUrl, user: "app", pass: "app" });
  try {
    await assert.rejects(
      callApi<PprofReply>(nc, nodeSubjects("prof").opsPprof, { type: "heap" }, 120_000),
      (err: Error) => {
        assert.match(
          err.message,
          /^413 the heap profile is \d+ bytes compressed, over the bus's max_payload of 1048576/,
        );
        assert.match(err.message, /grant natsmon's user publish on \$O\.MON_PPROF\.>/);
        return true;
      },
    );
    // The node goes on answering.
    const cpu = await callApi<PprofReply>(nc, nodeSubjects("prof").opsPprof, {
      type: "cpu",
      duration_ms: 100,
    });
    assert.equal(cpu.encoding, "gzip+base64");
  } finally {
    await nc.close();
  }
});
