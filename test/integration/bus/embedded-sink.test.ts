import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import { jetstreamManager } from "@nats-io/jetstream";
import { startEmbeddedSink } from "../../../src/bus/index.ts";
import { EMBEDDED_GOGC } from "../../../src/bus/embedded-sink.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly level: number;
  readonly msg: string;
  readonly source?: string;
}

/** A logger that keeps every line, for tests that read what was logged. */
function recordingLogger(): { log: pino.Logger; lines: LogLine[] } {
  const { log, lines } = captureLog<LogLine>("trace");
  return { log, lines };
}

const SINK = { replicas: 1, embedded: { host: "127.0.0.1", port: -1 } } as const;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the embedded sink", () => {
  test("lets local clients in without credentials, with JetStream, and natsmon's system user see $SYS", async () => {
    await using dir = await tempDir();
    await using sink = await startEmbeddedSink(SINK, dir.path);
    const local = await connect({ servers: sink.server.clientUrl });
    const jsm = await jetstreamManager(local);
    await jsm.streams.add({ name: "PROBE", subjects: ["probe.>"] });
    assert.equal((await jsm.streams.info("PROBE")).config.name, "PROBE");
    await local.close();

    const sys = await connect({
      servers: sink.system.url,
      user: sink.system.user,
      pass: sink.system.password,
    });
    const reply = await sys.request("$SYS.REQ.SERVER.PING.VARZ", "{}", { timeout: 2000 });
    assert.equal(reply.json<{ server: { name: string } }>().server.name, "natsmon-embedded");
    await sys.close();
  });

  test("starting leaves no closed connection behind: natsmon watching its own sink reports none", async () => {
    await using dir = await tempDir();
    await using sink = await startEmbeddedSink(SINK, dir.path);
    const sys = await connect({
      servers: sink.system.url,
      user: sink.system.user,
      pass: sink.system.password,
    });
    try {
      const reply = await sys.request(
        "$SYS.REQ.SERVER.PING.CONNZ",
        JSON.stringify({ state: 1 }) /* ConnClosed */,
        {
          timeout: 2000,
        },
      );
      const closed = reply.json<{ data: { connections?: { reason?: string; name?: string }[] } }>().data;
      assert.deepEqual(closed.connections ?? [], []);
    } finally {
      await sys.close();
    }
  });

  test("runs the server with natsmon's GOGC, or the one natsmon's environment sets", async () => {
    /** The GOGC the embedded server runs with when natsmon's own GOGC is `gogc`. */
    const serverGogc = async (gogc: string | undefined): Promise<string | undefined> => {
      const saved = process.env.GOGC;
      if (gogc === undefined) delete process.env.GOGC;
      else process.env.GOGC = gogc;
      try {
        await using dir = await tempDir();
        await using sink = await startEmbeddedSink(SINK, dir.path);
        const environ = await readFile(`/proc/${sink.server.pid}/environ`, "utf8");
        return environ
          .split("\0")
          .find((v) => v.startsWith("GOGC="))
          ?.slice("GOGC=".length);
      } finally {
        if (saved === undefined) delete process.env.GOGC;
        else process.env.GOGC = saved;
      }
    };
    assert.equal(await serverGogc(undefined), EMBEDDED_GOGC);
    assert.equal(await serverGogc("150"), "150");
  });

  test("leaves no process behind when stopped", async () => {
    await using dir = await tempDir();
    const sink = await startEmbeddedSink(SINK, dir.path);
    const pid = sink.server.pid;
    await sink[Symbol.asyncDispose]();
    assert.equal(alive(pid), false);
  });

  test("kills an orphan nats-server left by an earlier crash before starting", async () => {
    await using dir = await tempDir();
    const first = await startEmbeddedSink(SINK, dir.path);
    // A second start on the same data dir finds the first one's pid file, as after a crash.
    await using second = await startEmbeddedSink(SINK, dir.path);
    await waitFor(() => !alive(first.server.pid), { message: "the orphan to die" });
    assert.notEqual(second.server.pid, first.server.pid);
  });

  test("dies with its parent when the parent is killed with SIGKILL", async () => {
    await using dir = await tempDir();
    const module = fileURLToPath(new URL("../../../src/bus/index.ts", import.meta.url));
    const script = `
      const { startEmbeddedSink } = await import(${JSON.stringify(module)});
      const sink = await startEmbeddedSink(${JSON.stringify(SINK)}, ${JSON.stringify(dir.path)});
      process.stdout.write("ready " + sink.server.pid + "\\n");
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    parent.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const pid = await waitFor(() => Number(/ready (\d+)/.exec(out)?.[1]) || undefined, {
      message: "the child to start",
    });
    assert.equal(Number(await readFile(join(dir.path, "nats", "nats-server.pid"), "utf8")), pid);
    parent.kill("SIGKILL");
    await waitFor(() => !alive(pid), { message: "nats-server to die with its parent" });
  });

  test("logs what nats-server says once running, at the level of its tag, and its start-up banner at debug", async () => {
    await using dir = await tempDir();
    const { log, lines } = recordingLogger();
    await using sink = await startEmbeddedSink(SINK, dir.path, log.child({ source: "nats-server" }));
    // A client refused for its password: nats-server logs it as [ERR].
    await assert.rejects(connect({ servers: sink.server.clientUrl, user: "natsmon", pass: "wrong" }));
    const refused = await waitFor(
      () => lines.find((l) => l.source === "nats-server" && /authentication error/.test(l.msg)),
      { message: "nats-server's authentication error in natsmon's log" },
    );
    assert.equal(refused.level, pino.levels.values.error);
    const banner = lines.find((l) => l.source === "nats-server" && /Starting nats-server/.test(l.msg));
    assert.equal(banner?.level, pino.levels.values.debug);
  });

  test("restarts its server on the same URL, store and credentials, and a client reconnects to it", async () => {
    await using dir = await tempDir();
    await using sink = await startEmbeddedSink(SINK, dir.path);
    const nc = await connect({
      servers: sink.sink.url,
      user: sink.sink.user,
      pass: sink.sink.password,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "KEPT", subjects: ["kept.>"] });
    const before = sink.server.pid;
    await sink.restart("a test asks for it");
    assert.notEqual(sink.server.pid, before);
    assert.equal(sink.server.clientUrl, sink.sink.url);
    const info = await waitFor(() => jsm.streams.info("KEPT"), {
      message: "the stream through the reconnected client",
    });
    assert.equal(info.config.name, "KEPT");
    await nc.close();
  });
});
