/**
 * A node that cannot start says why and what to do, by what failed: a sink with no server
 * behind its URL, one that refuses natsmon's credentials, one whose account has no JetStream,
 * and a data dir the embedded server cannot write its store in. Spawned as a user runs it;
 * each exits 1.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { APP_USER, startTestServer, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";

/** `natsmon run` with the environment given; its exit code and last line on stderr. */
async function runWith(
  env: Record<string, string>,
  options = {},
): Promise<{ code: number | string; last: string }> {
  const r = await runNatsmon(["run"], env, undefined, options);
  const lines = r.stderr.trim().split("\n");
  return { code: r.code, last: lines.at(-1) ?? "" };
}

test("a sink with no server, one refusing the credentials, and one without JetStream are each told apart", async () => {
  await using dir = await tempDir();
  await using server = await startTestServer("sink-faults");
  const base = { NATSMON_NODE_DATA_DIR: join(dir.path, "data"), NATSMON_SCRAPER_INTERVAL: "1s" };

  const nobody = await runWith({ ...base, NATSMON_SINK_URL: "nats://127.0.0.1:1" });
  assert.equal(nobody.code, 1);
  assert.equal(
    nobody.last,
    "natsmon: cannot use the sink bus at nats://127.0.0.1:1: connection refused. No NATS server answered " +
      "there: check sink.url, and that the server runs and is reachable from here.",
  );

  const refused = await runWith({
    ...base,
    NATSMON_SINK_URL: server.url,
    NATSMON_SINK_USER: APP_USER.user,
    NATSMON_SINK_PASSWORD: "wrong",
  });
  assert.equal(refused.code, 1);
  assert.match(
    refused.last,
    /: Authorization Violation\. The server refused natsmon's credentials: check sink\.user and sink\.password, sink\.creds, sink\.nkey or sink\.token\.$/i,
  );

  const noJetStream = await runWith({
    ...base,
    NATSMON_SINK_URL: server.url,
    NATSMON_SINK_USER: SYS_USER.user,
    NATSMON_SINK_PASSWORD: SYS_USER.password,
  });
  assert.equal(noJetStream.code, 1);
  assert.match(noJetStream.last, /natsmon needs a NATS server with JetStream enabled for its account\.$/);
});

test("a data dir the embedded server cannot write in is named, with the setting to change", async () => {
  await using dir = await tempDir();
  const parent = join(dir.path, "read-only");
  await mkdir(parent);
  await chmod(parent, 0o555);
  const dataDir = join(parent, "data");
  const r = await runWith(
    { NATSMON_NODE_DATA_DIR: dataDir, NATSMON_SINK_EMBEDDED_PORT: "-1" },
    { honourFileModes: true },
  );
  assert.equal(r.code, 1);
  assert.equal(
    r.last,
    `natsmon: the embedded nats-server cannot keep its store under the data dir (${join(dataDir, "nats")}): ` +
      "permission denied. Give natsmon's user write access to node.data-dir, or choose another with " +
      "node.data-dir (NATSMON_NODE_DATA_DIR, --data-dir).",
  );
});
