/**
 * A node's start-up as a client sees it (spec: Endpoints, "Each db endpoint returns 503 when
 * the node holds the system's catalog but its database is not open"): from the moment
 * $MON.ping lists a system with the catalog role, its db endpoints answer, with a 503 saying
 * the catalog is opening until it is open. Before, they had no responder until the database,
 * its macros, the findings baseline and the commit consumer were all set up, and the CLI
 * then said no node serves a system that `natsmon systems` listed. The scrape role likewise:
 * its ops.scraper.* endpoints answer 503 "starting" until the scraper runs.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { connect } from "@nats-io/transport-node";
import { errors, type NatsConnection } from "@nats-io/nats-core";
import { readArrowStream, StreamFailedError } from "../../src/cli/index.ts";
import { Role } from "../../src/domain/index.ts";
import {
  PING_SUBJECT,
  ServiceErrorHeader,
  systemSubjects,
  type DiscoveryReply,
} from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEMS = ["east", "west"] as const;
const OPENING = /catalog of system \w+ is opening; retry in a moment/;
const STARTING = /scraper of system \w+ is starting; retry in a moment/;

/** What a request got: `ok`, `no responders`, or `<code>: <description>`. */
type Outcome = string;

function isNoResponders(err: unknown): boolean {
  return (
    (err instanceof errors.RequestError && err.isNoResponders()) || err instanceof errors.NoRespondersError
  );
}

/** The systems $MON.ping lists with `role`; none while nothing answers it yet. */
async function pinged(nc: NatsConnection, role: Role): Promise<string[]> {
  try {
    const reply = (await nc.request(PING_SUBJECT, "", { timeout: 5000 })).json<DiscoveryReply>();
    return reply.systems.filter((s) => s.roles.includes(role)).map((s) => s.id);
  } catch (err) {
    if (isNoResponders(err)) return [];
    throw err;
  }
}

const catalogsPinged = (nc: NatsConnection) => pinged(nc, Role.Catalog);

/** A request/reply endpoint's outcome. */
async function request(nc: NatsConnection, subject: string): Promise<Outcome> {
  try {
    const reply = await nc.request(subject, "{}", { timeout: 10_000 });
    const code = reply.headers?.get(ServiceErrorHeader.Code);
    return code ? `${code}: ${reply.headers?.get(ServiceErrorHeader.Description)}` : "ok";
  } catch (err) {
    if (isNoResponders(err)) return "no responders";
    throw err;
  }
}

const schemas = (nc: NatsConnection, system: string) => request(nc, systemSubjects(system).dbSchemas);
const scraperStatus = (nc: NatsConnection, system: string) =>
  request(nc, systemSubjects(system).opsScraperStatus);

async function queryStream(nc: NatsConnection, system: string): Promise<Outcome> {
  try {
    const reader = await readArrowStream(
      nc,
      systemSubjects(system).dbQueryStream,
      { sql: "SELECT 1 AS one" },
      { timeoutMs: 10_000 },
    );
    for await (const batch of reader) void batch;
    return "ok";
  } catch (err) {
    if (err instanceof StreamFailedError) return `${err.trailer.code}: ${err.trailer.description}`;
    if (isNoResponders(err) || (err as Error).name === "NoResponderError") return "no responders";
    throw err;
  }
}

/** The embedded bus's URL and pid, from the ports file nats-server writes as soon as it listens. */
async function embeddedBus(dataDir: string): Promise<{ url: string; pid: number }> {
  return waitFor(
    async () => {
      const natsDir = join(dataDir, "nats");
      const file = (await readdir(natsDir).catch(() => [])).find((f) => f.endsWith(".ports"));
      if (!file) return undefined;
      try {
        const url = (JSON.parse(await readFile(join(natsDir, file), "utf8")) as { nats?: string[] })
          .nats?.[0];
        // nats-server_<pid>.ports
        return url ? { url, pid: Number(/_(\d+)\.ports$/.exec(file)![1]) } : undefined;
      } catch {
        return undefined; // the file appears before its content
      }
    },
    { intervalMs: 5, message: "the embedded nats-server's ports file" },
  );
}

const embeddedBusUrl = async (dataDir: string) => (await embeddedBus(dataDir)).url;

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

test("from the moment $MON.ping lists a role, its endpoints answer: 503 while the side starts, never no responders", async (t) => {
  await using dir = await tempDir();
  const data = join(dir.path, "data");
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: starting, data-dir: ${JSON.stringify(data)}}`,
      "sink: {embedded: {port: -1}}",
      "systems:",
      ...SYSTEMS.map((id) => `  - {id: ${id}}`),
      "scraper: {interval: 1s}",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  const nc = await waitFor(
    async () => connect({ servers: await embeddedBusUrl(data), maxReconnectAttempts: 0 }),
    { intervalMs: 5, message: "a connection to the starting node's bus" },
  );
  try {
    // Poll as fast as the bus answers until every system's db and scraper endpoints serve,
    // keeping what each request got once ping had listed the side's role.
    const sides = SYSTEMS.flatMap((id) => [`${id} ${Role.Catalog}`, `${id} ${Role.Scrape}`]);
    const seen = new Map<string, Outcome[]>(sides.map((side) => [side, []]));
    const serving = new Set<string>();
    const ask = (role: Role, system: string) =>
      role === Role.Catalog
        ? Promise.all([schemas(nc, system), queryStream(nc, system)])
        : Promise.all([scraperStatus(nc, system)]);
    await waitFor(
      async () => {
        for (const role of [Role.Catalog, Role.Scrape]) {
          for (const system of await pinged(nc, role)) {
            const side = `${system} ${role}`;
            if (serving.has(side)) continue;
            const outcomes = await ask(role, system);
            seen.get(side)!.push(...outcomes);
            if (outcomes.every((o) => o === "ok")) serving.add(side);
          }
        }
        return serving.size === sides.length;
      },
      { intervalMs: 0, timeoutMs: 60_000, message: "every system's db and scraper endpoints to serve" },
    );
    for (const [side, outcomes] of seen) {
      const counts = Object.groupBy(outcomes, (o) =>
        o.startsWith("503: ") && (OPENING.test(o) || STARTING.test(o)) ? "starting" : o,
      );
      t.diagnostic(
        `${side}, after ping listed it: ${Object.entries(counts)
          .map(([outcome, of]) => `${of?.length} × ${outcome}`)
          .join(", ")}`,
      );
      assert.deepEqual(
        Object.keys(counts).filter((outcome) => outcome !== "ok" && outcome !== "starting"),
        [],
        `${side}: every request got an answer or a 503 saying the side is still starting`,
      );
    }
  } finally {
    await nc.close();
  }
  // Started in full, it stops cleanly.
  await node.waitForUrl();
  assert.equal(await node.kill("SIGTERM"), 0, node.stderr());
});

test("a node stopped while it starts stops what it started and exits as a stop after start-up does", async (t) => {
  await using dir = await tempDir();
  const data = join(dir.path, "data");
  await using node = spawnNatsmon(["run", "--data-dir", data], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  const bus = await embeddedBus(data);
  const nc = await waitFor(async () => connect({ servers: bus.url, maxReconnectAttempts: 0 }), {
    intervalMs: 5,
    message: "a connection to the starting node's bus",
  });
  let exit: number | string;
  try {
    await waitFor(async () => (await catalogsPinged(nc)).includes("local"), {
      intervalMs: 0,
      message: "$MON.ping to list the catalog",
    });
  } finally {
    // Mostly mid start-up (the catalog opens and the scraper starts after ping answers).
    const started = node.stdout().includes("is running");
    exit = await node.kill("SIGTERM");
    t.diagnostic(started ? "stopped after start-up" : "stopped during start-up");
    await nc.close().catch(() => undefined);
    if (alive(bus.pid)) process.kill(bus.pid, "SIGKILL"); // so a failure leaves nothing behind
  }
  assert.equal(exit, 0, `a clean stop exits 0, not killed by the signal: ${node.stderr()}`);
  assert.match(node.stderr(), /"stopping"/);
  assert.equal(alive(bus.pid), false, "the embedded nats-server stopped with the node");
  // A catalog it had opened was closed: a fresh DuckDB opens its file. (A stop before the
  // catalog opened leaves no file.)
  const catalog = join(data, "local.duckdb");
  if (existsSync(catalog)) {
    const instance = await DuckDBInstance.create(catalog);
    const con = await instance.connect();
    assert.equal((await con.runAndReadAll("SELECT 1 AS one")).getRowObjects()[0]?.one, 1);
    con.closeSync();
    instance.closeSync();
  } else {
    t.diagnostic("stopped before the catalog opened");
  }
});
