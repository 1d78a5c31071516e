/**
 * A stop of the sink whose drain does not end in time kills the embedded nats-server, stuck as
 * 2.9.10 is after a failed write. One that has already exited (killed, crashed, not started
 * again yet) is not said to be killed: there is nothing to kill.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { test } from "node:test";
import { loadConfig } from "../../../src/config/index.ts";
import { startSink } from "../../../src/node/sink.ts";
import { captureLog } from "../../harness/capture-log.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";

test("a sink stopped after its embedded nats-server exited says it had exited, not that natsmon kills it", async () => {
  await using dir = await tempDir();
  const loaded = await loadConfig({
    env: { NATSMON_NODE_DATA_DIR: dir.path, NATSMON_SINK_EMBEDDED_PORT: "-1" },
  });
  assert.ok(loaded.ok);
  const { log, lines } = captureLog();
  // A long wait before the server is started again: it stays down until the stop.
  const sink = await startSink(loaded.config, "local", log, { restartDelaysMs: [600_000] });
  // Whatever takes the port meanwhile and says nothing (no INFO): natsmon's reconnect to it
  // hangs, so the drain at the stop does not end as a refused reconnect soon ends it.
  const sockets: Socket[] = [];
  const squatter = createServer((socket) => sockets.push(socket));
  try {
    const url = new URL(sink.url);
    const server = sink.embedded!.server;
    server.kill("SIGKILL");
    await server.exit;
    await new Promise<void>((resolve, reject) => {
      squatter.once("error", reject);
      squatter.listen(Number(url.port), url.hostname, resolve);
    });
    await waitFor(() => sockets.length > 0, {
      message: "natsmon reconnecting to the port",
      timeoutMs: 30_000,
    });

    await sink[Symbol.asyncDispose]();
    assert.deepEqual(
      lines.filter((l) => /does not answer|killing it/.test(l.msg)),
      [],
      "no line says natsmon kills a server that has already exited",
    );
    assert.ok(
      lines.some((l) => /the embedded nats-server had already exited/.test(l.msg)),
      "the stop says the server had exited",
    );
  } finally {
    for (const socket of sockets) socket.destroy();
    squatter.close();
  }
});

test("a sink stopped while its embedded nats-server is alive but answers nothing kills it, saying so", async () => {
  await using dir = await tempDir();
  const loaded = await loadConfig({
    env: { NATSMON_NODE_DATA_DIR: dir.path, NATSMON_SINK_EMBEDDED_PORT: "-1" },
  });
  assert.ok(loaded.ok);
  const { log, lines } = captureLog();
  const sink = await startSink(loaded.config, "local", log);
  const server = sink.embedded!.server;
  // Frozen, as nats-server 2.9.10 is stuck after a failed write: it would ignore SIGTERM too.
  server.kill("SIGSTOP");
  // The signal lands a moment after kill() returns: a drain before that would still end.
  await waitFor(async () => (await readFile(`/proc/${server.pid}/stat`, "utf8")).split(" ")[2] === "T", {
    message: `nats-server ${server.pid} stopped`,
  });
  await sink[Symbol.asyncDispose]();
  assert.deepEqual(await server.exit, { code: null, signal: "SIGKILL" });
  assert.ok(
    lines.some((l) => l.level === 40 && /the embedded nats-server does not answer; killing it/.test(l.msg)),
    "the stop says it kills the server",
  );
  assert.ok(!lines.some((l) => /had already exited/.test(l.msg)));
});
