import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readlink, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { findNatsServer } from "../../src/bus/index.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { APP_USER, SYS_USER, startTestServer } from "../harness/start-nats-server.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** One scrape at start, none after. */
const ENV = { NATSMON_SINK_EMBEDDED_PORT: "-1", NATSMON_SCRAPER_INTERVAL: "1h" };

const alive = (pid: number) => existsSync(`/proc/${pid}`);

async function embeddedServerPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, "nats", "nats-server.pid"), "utf8")).trim());
}

/** Waits until the node's catalog has folded an epoch, through a connection to its bus. */
async function foldedEpochs(nc: NatsConnection, system: string): Promise<number> {
  return waitFor(
    async () => {
      const n = (await sqlQuery<{ n: number }>(nc, system, "SELECT count(*) AS n FROM hx.epochs"))[0]?.n;
      return n !== undefined && n > 0 ? n : undefined;
    },
    { timeoutMs: 45_000, message: "an epoch folded" },
  );
}

/**
 * Runs `natsmon <args>` as a node that should refuse to start: a node that starts instead (it
 * prints its bus URL) is stopped and fails the test, rather than running until the timeout.
 */
async function startRefused(args: readonly string[], env: Record<string, string> = {}) {
  const node = spawnNatsmon(args, env);
  await Promise.race([node.exited, node.waitForUrl().catch(() => undefined)]);
  if (node.child.exitCode === null && node.child.signalCode === null) {
    await node.kill("SIGTERM");
    assert.fail(`the second node started:\n${node.stdout()}${node.stderr()}`);
  }
  return { code: await node.exited, stderr: node.stderr() };
}

function refusal(pid: number, dataDir: string): RegExp {
  const escaped = dataDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(
    `another natsmon node \\(pid ${pid}\\) is running on data dir ${escaped}; ` +
      "stop it, or give this node another node\\.data-dir",
  );
}

describe("a second node on a data dir a live node uses", () => {
  test("is refused with the other node's pid, and the first node's embedded server and catalog go on", async () => {
    await using dir = await tempDir();
    let first: NatsmonProcess | undefined;
    let nc: NatsConnection | undefined;
    try {
      first = spawnNatsmon(["run", "--data-dir", dir.path], ENV);
      const url = await first.waitForUrl();
      nc = await connect({ servers: url });
      await foldedEpochs(nc, "local");
      const serverPid = await embeddedServerPid(dir.path);

      const second = await startRefused(["run", "--data-dir", dir.path], ENV);
      assert.equal(second.code, 1, second.stderr);
      assert.match(second.stderr, refusal(first.child.pid!, dir.path));

      // The first node's server is untouched (same process, same credentials): natsmon still
      // uses it, and its catalog answers.
      assert.equal(await embeddedServerPid(dir.path), serverPid);
      assert.ok(alive(serverPid));
      assert.ok((await foldedEpochs(nc, "local")) > 0);
      assert.equal(first.child.exitCode, null);
    } finally {
      await nc?.close();
      await first?.kill("SIGTERM");
    }
  });

  test("on an external sink is refused as well, since the nodes would share the catalog files", async () => {
    await using dir = await tempDir();
    await using server = await startTestServer();
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(server.url)}, user: ${APP_USER.user}, password: ${APP_USER.password}}`,
        "system:",
        "  id: prod",
        `  nats: {url: ${JSON.stringify(server.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
        "scraper: {interval: 1h}",
      ].join("\n"),
    );
    let first: NatsmonProcess | undefined;
    let nc: NatsConnection | undefined;
    try {
      first = spawnNatsmon(["run", "--config", config]);
      await first.waitForUrl();
      nc = await connect({ servers: server.url, ...APP_USER_AUTH });
      await foldedEpochs(nc, "prod");

      const second = await startRefused(["run", "--config", config]);
      assert.equal(second.code, 1, second.stderr);
      assert.match(second.stderr, refusal(first.child.pid!, join(dir.path, "data")));
      assert.ok((await foldedEpochs(nc, "prod")) > 0);
    } finally {
      await nc?.close();
      await first?.kill("SIGTERM");
    }
  });
});

const APP_USER_AUTH = { user: APP_USER.user, pass: APP_USER.password };

describe("a node killed with SIGKILL", () => {
  test("leaves a data dir the next node starts on, killing the nats-server it left running", async () => {
    await using dir = await tempDir();
    const crashed = spawnNatsmon(["run", "--data-dir", dir.path], ENV);
    await crashed.waitForUrl();
    const crashedServer = await embeddedServerPid(dir.path);
    assert.equal(await crashed.kill("SIGKILL"), "SIGKILL");
    // natsmon's server dies with it (setpriv's death signal); one that outlived it, as where
    // setpriv is missing, is started again on its configuration: an orphan of the crash.
    await waitFor(() => !alive(crashedServer), { message: "the crashed node's nats-server to die" });
    const orphan = spawn(findNatsServer(), ["-c", join(dir.path, "nats", "nats-server.conf")], {
      stdio: "ignore",
      detached: true,
    });
    orphan.unref();
    const orphanExit = new Promise<string | number | null>((resolve) =>
      orphan.once("exit", (code, signal) => resolve(signal ?? code)),
    );
    try {
      await waitFor(async () => (await embeddedServerPid(dir.path)) === orphan.pid, {
        message: "the orphan to write its pid file",
      });

      const next = spawnNatsmon(["run", "--data-dir", dir.path], ENV);
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ servers: await next.waitForUrl() });
        assert.ok((await foldedEpochs(nc, "local")) > 0);
        assert.match(next.stderr(), /took over the data dir from a process that is gone/);
        assert.equal(await orphanExit, "SIGKILL", "the orphan nats-server was killed");
        assert.notEqual(await embeddedServerPid(dir.path), orphan.pid);
      } finally {
        await nc?.close();
        await next.kill("SIGTERM");
      }
    } finally {
      if (orphan.exitCode === null && orphan.signalCode === null) orphan.kill("SIGKILL");
    }
  });
});

describe("a node in another container (another pid namespace) on the data dir", () => {
  test("refuses a node here, naming its pid namespace; once it crashed, the next node here takes over its lock when it goes stale", async () => {
    await using dir = await tempDir();
    const other = spawnNatsmon(["run", "--data-dir", dir.path], ENV, undefined, { newPidNamespace: true });
    let crashed = false;
    try {
      await other.waitForUrl();
      const lock = JSON.parse(await readFile(join(dir.path, "natsmon.lock"), "utf8")) as {
        pid: number;
        ns: string;
      };
      assert.notEqual(
        lock.ns,
        await readlink("/proc/self/ns/pid"),
        "the other node runs in another pid namespace",
      );

      const second = await startRefused(["run", "--data-dir", dir.path], ENV);
      assert.equal(second.code, 1, second.stderr);
      const escaped = dir.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      assert.match(
        second.stderr,
        new RegExp(
          `another natsmon node \\(pid ${lock.pid} in another container \\(pid namespace ` +
            `${lock.ns.replace(/[[\]]/g, "\\$&")}\\)\\) is running on data dir ${escaped}: its lock was refreshed`,
        ),
      );

      // The container dies (killed with SIGKILL) and leaves its lock.
      await other.kill("SIGKILL");
      crashed = true;
      assert.ok(existsSync(join(dir.path, "natsmon.lock")));
      const next = spawnNatsmon(["run", "--data-dir", dir.path], ENV);
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ servers: await next.waitForUrl(60_000) });
        assert.ok((await foldedEpochs(nc, "local")) > 0);
        assert.match(next.stderr(), /took over the data dir from a node whose pid cannot be checked here/);
      } finally {
        await nc?.close();
        await next.kill("SIGTERM");
      }
    } finally {
      if (!crashed) await other.kill("SIGTERM");
    }
  });
});

describe("a node whose data dir lock another node took over", () => {
  test("stops with exit 1 and says why, and leaves the other node's lock in place", async () => {
    await using dir = await tempDir();
    const node = spawnNatsmon(["run", "--data-dir", dir.path], ENV);
    try {
      await node.waitForUrl();
      // As a node in another container does when this one went unrefreshed past the lock's
      // staleness (frozen): its own lock, linked in place of this one's.
      const lock = join(dir.path, "natsmon.lock");
      const theirs =
        JSON.stringify({ pid: 4242, started: "1", boot: "another-hosts-boot", ns: "pid:[1]" }) + "\n";
      await writeFile(`${lock}.theirs`, theirs);
      await rename(`${lock}.theirs`, lock);
      assert.equal(await node.exited, 1, node.stderr().slice(-3000));
      assert.match(
        node.stderr(),
        /"level":50.*the data dir lock .*natsmon\.lock is another node's now \(.*4242,.*this node stops, so that one node uses the data dir/,
      );
      assert.equal(await readFile(lock, "utf8"), theirs);
    } finally {
      await node.kill("SIGKILL").catch(() => undefined);
    }
  });
});
