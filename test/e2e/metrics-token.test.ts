/**
 * GET /metrics behind node.metrics-token-file, on a real node: without the token or with a
 * wrong one 401 and a Bearer challenge; with it the metrics; a rotated token holds from the
 * next request; a file emptied while being rewritten leaves the last token in force; and
 * Debian's real Prometheus scrapes it with `authorization.credentials_file`.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { rawHttpCall } from "../harness/http-call.ts";
import { spawnMetricsNode, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startPrometheus } from "../harness/start-prometheus.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("GET /metrics with node.metrics-token-file", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let url: string;
  let tokenFile: string;
  const get = (authorization?: string) =>
    rawHttpCall(url, { headers: authorization === undefined ? {} : { authorization } });

  before(async () => {
    dir = await tempDir();
    tokenFile = join(dir.path, "metrics.token");
    await writeFile(tokenFile, "first-token\n");
    ({ node, url } = await spawnMetricsNode(join(dir.path, "data"), {
      NATSMON_NODE_METRICS_TOKEN_FILE: tokenFile,
    }));
  });

  after(async () => {
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
  });

  test("no token or a wrong one gets 401 with a Bearer challenge; the token gets the metrics", async () => {
    const missing = await get();
    assert.equal(missing.status, 401);
    assert.equal(missing.headers["www-authenticate"], 'Bearer realm="natsmon"');
    assert.match(missing.body.toString(), /missing bearer token.*node\.metrics-token-file/);
    assert.doesNotMatch(missing.body.toString(), /natsmon_/);
    const wrong = await get("Bearer second-token");
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers["www-authenticate"], 'Bearer realm="natsmon", error="invalid_token"');
    const right = await get("Bearer first-token");
    assert.equal(right.status, 200);
    assert.match(right.body.toString(), /^natsmon_data_dir_free_bytes\{node_id="local"\} \d+$/m);
    // Any path asks for the token first: what is served is not told to a client without it.
    assert.equal((await rawHttpCall(new URL("/other", url).href)).status, 401);
  });

  test("a rotated token holds from the next request; an emptied file leaves the last token in force", async () => {
    await writeFile(tokenFile, "second-token\n");
    assert.equal((await get("Bearer first-token")).status, 401);
    assert.equal((await get("Bearer second-token")).status, 200);
    assert.match(
      node.stdout() + node.stderr(),
      /GET \/metrics takes the token now in node\.metrics-token-file/,
    );
    await writeFile(tokenFile, "");
    assert.equal((await get("Bearer second-token")).status, 200);
    assert.match(
      node.stdout() + node.stderr(),
      /node\.metrics-token-file it holds no token.*takes the last token read/,
    );
    await writeFile(tokenFile, "third-token");
    assert.equal((await get("Bearer third-token")).status, 200);
  });

  test("a real Prometheus scrapes it with the token from its credentials_file", async () => {
    const credentials = join(dir.path, "prometheus.token");
    await writeFile(credentials, "third-token\n");
    await using prometheus = await startPrometheus([new URL(url).host], { credentialsFile: credentials });
    await waitFor(
      async () =>
        (await prometheus.query('up{job="natsmon"} == 1')).length === 1 &&
        (await prometheus.query("natsmon_data_dir_free_bytes")).length > 0,
      { timeoutMs: 30_000, message: "Prometheus to scrape the node with its token" },
    );
    // A wrong token: the target goes down.
    await writeFile(tokenFile, "fourth-token\n");
    await waitFor(async () => (await prometheus.query('up{job="natsmon"} == 0')).length === 1, {
      timeoutMs: 30_000,
      message: "the target down once the node takes another token",
    });
  });
});
