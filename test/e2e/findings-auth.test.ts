/**
 * A real server that stops requiring authentication fires server-007 on the finding feed,
 * and resolves it once authentication is back. The server's system account is its global
 * account, so natsmon scrapes it with the same user before and after; the change is a
 * configuration reload (SIGHUP), as an operator would make it.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { NatsServerProcess } from "../../src/bus/index.ts";
import { MONITOR, startAuthToggleServer } from "../harness/auth-toggle-server.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { subscribeFindingFeed, transitionTail, type FindingFeed } from "../harness/finding-feed.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

describe("a server that stops requiring authentication", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: NatsServerProcess;
  let node: NatsmonProcess;
  let nc: NatsConnection;
  let feed: FindingFeed;
  /** Rewrites the server's configuration and has it reload, as `nats-server --signal reload` does. */
  let reload: (auth: boolean) => Promise<void>;

  before(async () => {
    dir = await tempDir();
    const workDir = join(dir.path, "open1");
    let toggle;
    ({ server, setAuth: toggle } = await startAuthToggleServer(workDir));
    reload = toggle;
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        "system:",
        "  id: open",
        `  nats: {url: ${JSON.stringify(server.clientUrl)}, user: ${MONITOR.user}, password: ${MONITOR.password}}`,
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", config]);
    nc = await connect({ servers: await node.waitForUrl() });
    feed = subscribeFindingFeed(nc, "open");
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "open", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 2,
      { timeoutMs: 30_000, message: "two checked epochs" },
    );
  });

  after(async () => {
    await feed?.[Symbol.asyncDispose]();
    await nc?.close();
    await node?.kill("SIGTERM");
    await server?.stop();
    await dir?.[Symbol.asyncDispose]();
  });

  test("fires server-007 when authentication is turned off, and resolves it when it is back", async () => {
    assert.deepEqual(
      feed.received.filter((r) => r.transition.code === "server-007"),
      [],
      "authentication was required",
    );
    const from = feed.received.length;
    await reload(false);
    const open = await feed.next((t) => t.code === "server-007" && t.entity_name === "open1", {
      from,
      message: "server-007 firing",
    });
    assert.equal(transitionTail(open.subject), "firing.critical.server-007");
    assert.equal(open.transition.entity_type, "server");

    const back = feed.received.length;
    await reload(true);
    const closed = await feed.next((t) => t.code === "server-007" && t.entity_name === "open1", {
      from: back,
      message: "server-007 resolved",
    });
    assert.equal(transitionTail(closed.subject), "resolved.critical.server-007");
    assert.equal(closed.transition.starts_at, open.transition.starts_at);
  });
});
