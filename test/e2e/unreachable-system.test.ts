/**
 * A node with three systems: one whose system-account password is refused by a real 3-node
 * cluster (which gossips further URLs, so a reconnecting client would retry for ever in
 * silence), one at an address nothing listens on, and one that works. The node starts, the
 * working system is scraped and folded, and the other two say why they are not, in the log
 * and in their ops answers, while natsmon keeps retrying them. Then the server the working
 * system's connection goes through freezes: the connection leaves it for another server
 * after two missed pings, and the other servers are scraped again.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects } from "../../src/protocol/index.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { SYS_USER, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** A loopback port nothing listens on (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("systems that cannot be reached do not hold up the node's other systems", () => {
  let cluster: TestCluster;
  let sink: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let bus: NatsConnection;
  let nowhere: string;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    sink = await startTestServer("sink");
    dir = await tempDir();
    nowhere = `nats://127.0.0.1:${await closedPort()}`;
    const system = (id: string, url: string, password: string) =>
      `  - {id: ${id}, nats: {url: ${JSON.stringify(url)}, user: ${SYS_USER.user}, password: ${password}}}`;
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        `node: {id: mon1, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(sink.url)}}`,
        "systems:",
        system("refused", cluster.urls, "not-the-password"),
        system("nowhere", nowhere, SYS_USER.password),
        system("good", cluster.urls, SYS_USER.password),
        "scraper: {interval: 1s}",
        // Debug shows each retry, which logs at error only when its reason is new.
        "log: {level: debug}",
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", file]);
    bus = await connect({ servers: sink.url });
  });

  after(async () => {
    await bus?.close();
    await node?.kill("SIGTERM");
    await cluster?.[Symbol.asyncDispose]();
    await sink?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the working system is scraped and folded", async () => {
    await waitFor(
      async () => {
        const [row] = await sqlQuery<{ n: number }>(bus, "good", "SELECT count(*) AS n FROM hx.epochs");
        return (row?.n ?? 0) >= 1;
      },
      { timeoutMs: 60_000, message: "an epoch of the working system" },
    );
  });

  test("the others answer ops.scraper.status with 503 naming the address and the reason, and log it", async () => {
    const status = (id: string) => callApi(bus, systemSubjects(id).opsScraperStatus).then(() => "ok", String);
    const refused = await waitFor(
      async () => ((await status("refused")).includes("cannot connect") ? status("refused") : undefined),
      {
        message: "the refused system's reason",
      },
    );
    assert.match(refused, /^Error: 503 /);
    assert.match(refused, /cannot connect to the monitored system at nats:\/\/127\.0\.0\.1:\d+/);
    assert.match(refused, /Authorization Violation/i);
    assert.match(refused, /natsmon keeps retrying/);
    const unreachable = await status("nowhere");
    assert.match(unreachable, /^Error: 503 /);
    assert.ok(unreachable.includes(`cannot connect to the monitored system at ${nowhere}`), unreachable);

    const logged = (node.stdout() + node.stderr())
      .split("\n")
      .filter((l) => l.includes("cannot connect to the monitored system"));
    for (const id of ["refused", "nowhere"]) {
      assert.ok(
        logged.some((l) => l.includes(`"system":"${id}"`) && l.includes("check system.nats")),
        `a log line for ${id}: ${logged.join("\n")}`,
      );
    }
    assert.equal(node.child.exitCode, null, "the node is still running");
  });

  test("a connect failure that goes on is logged once, not at every retry", async () => {
    const lines = (id: string, pattern: RegExp) =>
      (node.stdout() + node.stderr())
        .split("\n")
        .filter((l) => l.includes(`"system":"${id}"`) && pattern.test(l));
    await waitFor(() => lines("refused", /the same connect failure again/).length >= 2, {
      timeoutMs: 60_000,
      message: "two more retries of the refused system",
    });
    const errors = lines("refused", /"level":50.*cannot connect to the monitored system/);
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0]!, /logged again when the reason changes, and every 10 minutes/);
  });

  test("a frozen server the scrape goes through is left for another: the other servers answer again", async () => {
    const sys = await connect({
      servers: cluster.urls.split(","),
      user: SYS_USER.user,
      pass: SYS_USER.password,
    });
    let through: string | undefined;
    try {
      through = await waitFor(
        async () => {
          type Connz = { server: { name: string }; data: { connections?: { name?: string }[] } };
          const replies = await sys.requestMany("$SYS.REQ.SERVER.PING.CONNZ", "{}", { maxWait: 1000 });
          for await (const m of replies) {
            const r = m.json<Connz>();
            if (r.data.connections?.some((c) => c.name === "natsmon mon1 scrape good")) return r.server.name;
          }
          return undefined;
        },
        { message: "the server the working system's scrape connection is on" },
      );
    } finally {
      await sys.close();
    }
    const frozen = cluster.nodes.find((n) => n.name === through)!;
    const others = cluster.nodes.filter((n) => n !== frozen).map((n) => n.name);
    // Epochs started after the freeze (same machine, same clock).
    const after = new Date(Date.now() + 1000).toISOString();
    frozen.pause();
    try {
      await waitFor(
        async () => {
          const rows = await sqlQuery<{ answered: string[] }>(
            bus,
            "good",
            `SELECT servers_answered AS answered FROM hx.epochs WHERE epoch > '${after}'::TIMESTAMPTZ`,
          );
          return rows.some((r) => others.every((name) => r.answered.includes(name)));
        },
        {
          timeoutMs: 60_000,
          message: `an epoch answered by ${others.join(" and ")} while ${frozen.name} is frozen`,
        },
      );
    } finally {
      frozen.resume();
    }
  });
});
