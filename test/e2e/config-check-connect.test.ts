/**
 * `natsmon config check --connect` against a real 3-node cluster: the offline check passes
 * a user of an application account and a wrong password alike; with --connect an external
 * sink and each scraped system are connected to once and checked as start-up checks them, a
 * line each, exit 1 when one fails.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";

describe("natsmon config check --connect", () => {
  let cluster: TestCluster;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  const writeConfig = async (name: string, systems: readonly string[], sink?: string) => {
    const file = join(dir.path, name);
    await writeFile(
      file,
      [
        `node: {id: mon1, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        ...(sink ? [sink] : []),
        "systems:",
        ...systems,
      ].join("\n"),
    );
    return file;
  };
  const system = (id: string, user: string, password: string) =>
    `  - {id: ${id}, nats: {url: ${JSON.stringify(cluster.urls)}, user: ${user}, password: ${password}}}`;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    dir = await tempDir();
  });

  after(async () => {
    await cluster?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("names the system that is not in the system account and the refused one, and exits 1", async () => {
    const file = await writeConfig("mixed.yaml", [
      system("good", SYS_USER.user, SYS_USER.password),
      system("app", APP_USER.user, APP_USER.password),
      system("refused", SYS_USER.user, "not-the-password"),
    ]);
    const offline = await runNatsmon(["config", "check", "--config", file]);
    assert.equal(offline.code, 0, offline.stderr);

    const online = await runNatsmon(["config", "check", "--connect", "--config", file]);
    assert.equal(online.code, 1, online.stdout + online.stderr);
    const line = (id: string) => online.stdout.split("\n").find((l) => l.startsWith(`system ${id}: `)) ?? "";
    assert.match(
      line("good"),
      /^system good: ok, user sys at nats:\/\/.* reaches the system's servers through server n\d/,
    );
    assert.match(line("app"), /\(user app\) is not in the system account: .*"no responders" from server n\d/);
    assert.match(line("app"), /use a user of the system account/);
    assert.match(
      line("refused"),
      /^system refused: cannot connect to nats:\/\/.* \(user sys\): Authorization Violation/i,
    );
  });

  test("exits 0 when every scraped system is in the system account", async () => {
    const file = await writeConfig("good.yaml", [system("good", SYS_USER.user, SYS_USER.password)]);
    const online = await runNatsmon(["config", "check", "--connect", "--config", file]);
    assert.equal(online.code, 0, online.stdout + online.stderr);
    assert.match(online.stdout, /^system good: ok/m);
    assert.match(online.stdout, /^sink: embedded \(the node starts its own nats-server\); not checked$/m);
  });

  test("checks an external sink: JetStream for its account, or which account lacks it", async () => {
    const sink = (user: string, password: string) =>
      `sink: {url: ${JSON.stringify(cluster.urls)}, user: ${user}, password: ${password}}`;
    const systems = [system("good", SYS_USER.user, SYS_USER.password)];
    const checkWith = async (name: string, sinkLine: string) =>
      runNatsmon(["config", "check", "--connect", "--config", await writeConfig(name, systems, sinkLine)]);
    const good = await checkWith("sink-good.yaml", sink(APP_USER.user, APP_USER.password));
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(
      good.stdout,
      /^sink: ok, nats:\/\/.* \(user app\) reaches server n\d \(nats-server \d+\.\d+\.\d+\) with JetStream for its account \(\d+ bytes stored\)$/m,
    );

    // The system account has no JetStream: the node could not keep its streams there.
    const noJetStream = await checkWith("sink-sys.yaml", sink(SYS_USER.user, SYS_USER.password));
    assert.equal(noJetStream.code, 1, noJetStream.stdout + noJetStream.stderr);
    assert.match(
      noJetStream.stdout,
      /^sink: connected to nats:\/\/.* \(user sys\), but its account has no JetStream the node can use: .*enable JetStream for the account/m,
    );
    assert.match(noJetStream.stdout, /^system good: ok/m, "the systems are checked still");

    const refused = await checkWith("sink-refused.yaml", sink(APP_USER.user, "wrong"));
    assert.equal(refused.code, 1);
    assert.match(
      refused.stdout,
      /^sink: cannot connect to nats:\/\/.* \(user app\): Authorization Violation/im,
    );
  });
});
