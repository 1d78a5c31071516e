import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { Svcm, type Service } from "@nats-io/services";
import { systemSubjects, type EpochAnnouncement, type ScraperStatusReply } from "../../src/protocol/index.ts";
import { APP_USER, SYS_USER, startTestServer, type TestServer } from "../harness/start-nats-server.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { callApi, sqlQuery } from "../harness/api-client.ts";
import { waitFor } from "../harness/wait-for.ts";

/** The next epoch announced on the system's feed. */
async function nextEpoch(nc: NatsConnection, system: string): Promise<string> {
  const sub = nc.subscribe(systemSubjects(system).feedEpoch, { max: 1 });
  for await (const m of sub) return m.json<EpochAnnouncement>().epoch;
  throw new Error("the epoch feed ended");
}

describe("micro services in an application account", () => {
  let server: TestServer;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;
  const services: Service[] = [];

  before(async () => {
    server = await startTestServer("svc1");
    dir = await tempDir();
    app = await connect({ servers: server.url, user: APP_USER.user, pass: APP_USER.password });
    const svcm = new Svcm(app);
    for (const instance of ["a", "b"]) {
      const service = await svcm.add({
        name: "echo",
        version: "1.2.3",
        description: "echoes requests",
        metadata: { instance },
      });
      service.addEndpoint("echo", { subject: "svc.echo", handler: (_err, msg) => msg.respond(msg.data) });
      service.addEndpoint("fail", {
        subject: "svc.fail",
        handler: () => {
          throw new Error("always fails");
        },
      });
      services.push(service);
    }
    for (let i = 0; i < 6; i++) await app.request("svc.echo", `hi ${i}`);
  });

  after(async () => {
    for (const s of services) await s.stop();
    await app?.close();
    await server?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("each instance and endpoint lands in hx.services and hx.service_endpoints", async () => {
    const config = join(dir.path, "services.yaml");
    await writeFile(
      config,
      [
        "node: {data-dir: " + JSON.stringify(join(dir.path, "data")) + "}",
        "sink: {embedded: {port: -1}}",
        "system:",
        "  id: svc",
        "  nats:",
        `    url: ${JSON.stringify(server.url)}`,
        `    user: ${SYS_USER.user}`,
        `    password: ${SYS_USER.password}`,
        "    accounts:",
        `      - {name: APP, user: ${APP_USER.user}, password: ${APP_USER.password}}`,
        // Wrong credentials for one account: reported per epoch, the rest is scraped.
        "      - {name: NOPE, user: nobody, password: wrong}",
        "scraper: {interval: 1h}",
      ].join("\n"),
    );
    const node: NatsmonProcess = spawnNatsmon(["run", "--config", config]);
    try {
      const nc = await connect({ servers: await node.waitForUrl() });
      try {
        const subjects = systemSubjects("svc");
        await nextEpoch(nc, "svc");
        // A second epoch after more traffic: counters move, configuration rows do not repeat.
        for (let i = 0; i < 4; i++) await app.request("svc.echo", `again ${i}`);
        const status = await callApi<ScraperStatusReply>(nc, subjects.opsScraperTrigger);
        const epoch = status.last_epoch!.epoch;
        const servicesSource = status.last_epoch!.sources.find((s) => s.source === "services");
        assert.equal(servicesSource?.servers, 2, "two instances found");
        await waitForEpoch(nc, epoch);

        const instances = await sqlQuery<{
          account: string;
          service: string;
          version: string;
          metadata: string;
          endpoints: number;
          num_requests: number;
          answered: string[];
        }>(
          nc,
          "svc",
          `SELECT account, service, version, metadata, endpoints, num_requests, answered
           FROM hx.services WHERE epoch = '${epoch}'::TIMESTAMPTZ ORDER BY metadata`,
        );
        assert.deepEqual(
          instances.map((i) => [i.account, i.service, i.version, i.metadata, i.endpoints]),
          [
            ["APP", "echo", "1.2.3", '{"instance":"a"}', 2],
            ["APP", "echo", "1.2.3", '{"instance":"b"}', 2],
          ],
        );
        assert.deepEqual(instances[0]!.answered, ["$SRV.INFO", "$SRV.STATS"]);
        // Queue group q spreads the 10 requests over both instances.
        assert.equal(
          instances.reduce((n, i) => n + Number(i.num_requests), 0),
          10,
        );
        const endpoints = await sqlQuery<{
          endpoint: string;
          subject: string;
          queue_group: string;
          n: number;
        }>(
          nc,
          "svc",
          `SELECT endpoint, subject, queue_group, count(*) AS n FROM hx.service_endpoints
           WHERE epoch = '${epoch}'::TIMESTAMPTZ GROUP BY ALL ORDER BY endpoint`,
        );
        assert.deepEqual(endpoints, [
          { endpoint: "echo", subject: "svc.echo", queue_group: "q", n: 2 },
          { endpoint: "fail", subject: "svc.fail", queue_group: "q", n: 2 },
        ]);
        const [opts] = await sqlQuery<{ service_opts: number; endpoint_opts: number }>(
          nc,
          "svc",
          "SELECT (SELECT count(*) FROM hx.service_opts) AS service_opts, (SELECT count(*) FROM hx.service_endpoint_opts) AS endpoint_opts",
        );
        assert.deepEqual(opts, { service_opts: 2, endpoint_opts: 4 });
        const [row] = await sqlQuery<{ errors: string[] }>(
          nc,
          "svc",
          `SELECT errors FROM hx.epochs WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
        );
        assert.ok(
          row!.errors.some((e) => e.startsWith("services: services of account NOPE:")),
          row!.errors.join("; "),
        );
      } finally {
        await nc.close();
      }
    } finally {
      await node.kill("SIGTERM");
    }
  });
});

function waitForEpoch(nc: NatsConnection, epoch: string): Promise<true> {
  return waitFor(
    async () => {
      const sql = `SELECT count(*) AS n FROM hx.epochs WHERE epoch = '${epoch}'::TIMESTAMPTZ`;
      const rows = await sqlQuery<{ n: number }>(nc, "svc", sql);
      return Number(rows[0]?.n) > 0;
    },
    { message: `epoch ${epoch} in the catalog` },
  );
}
