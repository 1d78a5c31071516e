/**
 * natsmon deployed as users run it (issue 7): a real 3-node JetStream cluster is the sink at
 * `sink.replicas: 3`; a scrape-only node and a catalog-only node, two processes, meet only
 * through the scrape stream. Every natsmon stream and bucket is R3; a cluster server stopped
 * loses no epoch; a catalog node killed with SIGKILL and restarted resumes where it left off,
 * folding no epoch twice and none lost.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { setTimeout as delay } from "node:timers/promises";
import { createInbox, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { SERVICE_INFO_WAIT_MS } from "../../src/api/unknown-system.ts";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  nodeAssets,
  ROLE_CLAIMS_BUCKET,
  systemAssets,
  systemSubjects,
  type CommitMarker,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { runNatsmon, spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { startTestCluster, type TestCluster } from "../harness/start-nats-cluster.ts";
import { APP_USER, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "prod";

describe("a scrape node and a catalog node on a 3-node JetStream cluster", () => {
  let cluster: TestCluster;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: NatsConnection;
  let scraper: NatsmonProcess;
  let catalog: NatsmonProcess;
  let catalogConfig: string;

  async function config(name: string, lines: string[]): Promise<string> {
    const file = join(dir.path, `${name}.yaml`);
    await writeFile(
      file,
      [
        `node: {id: ${name}, data-dir: ${JSON.stringify(join(dir.path, name))}}`,
        `sink: {url: ${JSON.stringify(cluster.urls)}, user: ${APP_USER.user}, password: ${APP_USER.password}, replicas: 3}`,
        ...lines,
      ].join("\n"),
    );
    return file;
  }

  /** How many commit markers the scrape stream holds, from the stream's own subject counts. */
  async function commitCount(): Promise<number> {
    const info = await (
      await jetstreamManager(app)
    ).streams.info(systemAssets(SYSTEM).scrapeStream, {
      subjects_filter: systemSubjects(SYSTEM).scrapeCommit,
    });
    return info.state.subjects?.[systemSubjects(SYSTEM).scrapeCommit] ?? 0;
  }

  /** Every epoch a commit marker on the scrape stream announces; throws on a short read. */
  async function committedEpochs(): Promise<string[]> {
    const expected = await commitCount();
    const consumer = await jetstream(app).consumers.get(systemAssets(SYSTEM).scrapeStream, {
      filter_subjects: systemSubjects(SYSTEM).scrapeCommit,
      deliver_policy: DeliverPolicy.All,
    });
    const epochs: string[] = [];
    if ((await consumer.info(true)).num_pending === 0) return epochs;
    const messages = await consumer.consume();
    for await (const m of messages) {
      epochs.push(m.json<CommitMarker>().epoch);
      if (m.info.pending === 0) break;
    }
    messages.stop();
    // Read while a cluster server comes and goes, the listing may come up short: ask again.
    if (epochs.length < expected) throw new Error(`read ${epochs.length} of ${expected} commit markers`);
    return epochs;
  }

  async function foldedEpochs(): Promise<{ epochs: string[]; distinct: number }> {
    const rows = await sqlQuery<{ epoch: string }>(app, SYSTEM, "SELECT epoch FROM hx.epochs ORDER BY epoch");
    return {
      epochs: rows.map((r) => new Date(r.epoch).toISOString()),
      distinct: new Set(rows.map((r) => r.epoch)).size,
    };
  }

  /** Waits until every committed epoch so far is folded, and returns how many there are. */
  async function allFolded(message: string): Promise<number> {
    return waitFor(
      async () => {
        const committed = (await committedEpochs()).map((e) => new Date(e).toISOString());
        const folded = new Set((await foldedEpochs()).epochs);
        return committed.length > 0 && committed.every((e) => folded.has(e)) && committed.length;
      },
      { timeoutMs: 60_000, message },
    );
  }

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    dir = await tempDir();
    app = await connect({ servers: cluster.urls.split(","), user: APP_USER.user, pass: APP_USER.password });
    catalogConfig = await config("cat", [
      "system:",
      `  id: ${SYSTEM}`,
      "  roles: [catalog]",
      "notifications:",
      '  webhook: [{name: hook, url: "http://127.0.0.1:9/never", enabled: false, subscriptions: ["*"]}]',
    ]);
    const scrapeConfig = await config("scr", [
      "system:",
      `  id: ${SYSTEM}`,
      "  roles: [scrape]",
      `  nats: {url: ${JSON.stringify(cluster.urls)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}`,
      "scraper: {interval: 1s}",
    ]);
    catalog = spawnNatsmon(["run", "--config", catalogConfig]);
    scraper = spawnNatsmon(["run", "--config", scrapeConfig]);
    await Promise.all([catalog.waitForUrl(), scraper.waitForUrl()]);
  });

  /**
   * Every message on a request's reply inbox until nothing more comes for longer than a
   * node waits for the bus's service instances (so a late second answer would be seen).
   */
  async function inboxAfter(subject: string, body: unknown): Promise<Msg[]> {
    const inbox = createInbox();
    const messages: Msg[] = [];
    const sub = app.subscribe(inbox, { callback: (_err, msg) => void messages.push(msg) });
    app.publish(subject, JSON.stringify(body), { reply: inbox });
    await waitFor(() => messages.length > 0 || undefined, {
      timeoutMs: 30_000,
      message: `an answer on ${subject}`,
    });
    let seen = 0;
    do {
      seen = messages.length;
      await delay(SERVICE_INFO_WAIT_MS + 1000);
    } while (messages.length > seen);
    sub.unsubscribe();
    return messages;
  }

  after(async () => {
    await scraper?.kill("SIGTERM");
    await catalog?.kill("SIGTERM");
    await app?.close();
    await cluster?.[Symbol.asyncDispose]();
    await dir?.[Symbol.asyncDispose]();
  });

  test("the scrape-only node points the operator at natsmon systems rather than a query", () => {
    assert.match(
      scraper.stdout(),
      /It holds no catalog here; see which node does: {2}natsmon systems --server nats:\/\//,
    );
    assert.match(catalog.stdout(), /Try, in another terminal: {2}natsmon query --server nats:\/\//);
  });

  test("the two processes produce epochs and findings together", async () => {
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(app, SYSTEM, "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n >= 2,
      { timeoutMs: 60_000, message: "checked epochs on the catalog node" },
    );
    await allFolded("every committed epoch folded");
  });

  test("ops.info on the catalog node reports the scraper's cadence, which its own configuration does not name", async () => {
    // The catalog node's configuration has no scraper key (its default is 30 s); the scrape
    // node scrapes every second, and says so in each commit marker.
    await allFolded("an epoch folded on the catalog node");
    const info = (await app.request(systemSubjects(SYSTEM).opsInfo, "{}", { timeout: 5000 })).json<{
      scraper: { interval: number };
    }>();
    assert.equal(info.scraper.interval, 1_000_000_000);
  });

  test("the streamed endpoints answer a served system once, whichever node takes the request, and an unknown one with a 503 trailer", async () => {
    // Each node also takes the streamed subjects of every system, one node per request (a
    // queue group): the scrape node, which serves no db endpoint, must find the catalog
    // node's and stay silent; for a system nobody serves, one of them sends the trailer.
    const requests: [string, unknown][] = [
      ...Array.from({ length: 6 }, (): [string, unknown] => [
        systemSubjects(SYSTEM).dbQueryStream,
        { sql: "SELECT 1 AS one" },
      ]),
      ...Array.from({ length: 6 }, (): [string, unknown] => [
        systemSubjects(SYSTEM).dbBackupStream,
        { schema: "hx", table: "migrations_not_backed_up" },
      ]),
      [systemSubjects("nosuch").dbQueryStream, { sql: "SELECT 1" }],
      [systemSubjects("nosuch").dbBackupStream, { schema: "hx", table: "epochs" }],
    ];
    const answers = await Promise.all(requests.map(([subject, body]) => inboxAfter(subject, body)));
    for (const [i, messages] of answers.entries()) {
      const kinds = messages.map((m) =>
        `${m.headers?.get("Monitor-Stream")} ${m.headers?.get("Nats-Service-Error-Code") ?? ""}`.trim(),
      );
      if (i < 6) assert.deepEqual(kinds, ["chunk", "chunk", "end"], `db.query.stream #${i}`);
      else if (i < 12) assert.deepEqual(kinds, ["error 400"], `db.backup.stream #${i}`);
      else {
        assert.deepEqual(kinds, ["error 503"], requests[i]![0]);
        assert.match(
          messages[0]!.json<{ description: string }>().description,
          /^no node serves system "nosuch": nothing on this bus answers \$MON\.sys\.nosuch\.db\.(query|backup)\.stream/,
        );
      }
    }
    // The query tool reads that 503 as no streaming responder: it asks db.query, which has none.
    const typo = await runNatsmon([
      "query",
      "--server",
      cluster.urls,
      "--user",
      APP_USER.user,
      "--password",
      APP_USER.password,
      "--system",
      "nosuch",
      "SELECT 1",
    ]);
    assert.equal(typo.code, 1);
    assert.match(
      typo.stderr,
      /no node serves system "nosuch" \(neither db\.query\.stream nor db\.query has a responder\)/,
    );
  });

  test("every natsmon stream and bucket on the sink is R3", async () => {
    const jsm = await jetstreamManager(app);
    const cat = nodeAssets("cat");
    for (const name of [
      systemAssets(SYSTEM).scrapeStream,
      `KV_${systemAssets(SYSTEM).findingsBucket}`,
      cat.outboxStream,
      `KV_${systemAssets(SYSTEM).deliveredBucket}`,
      cat.deliveryLogStream,
      `KV_${ROLE_CLAIMS_BUCKET}`,
    ]) {
      assert.equal((await jsm.streams.info(name)).config.num_replicas, 3, name);
    }
  });

  test("a stopped cluster server loses no epoch", async () => {
    const before = await allFolded("epochs folded before the stop");
    const n3 = cluster.nodes.find((n) => n.name === "n3")!;
    await n3.stop();
    await waitFor(async () => (await commitCount()) >= before + 3, {
      timeoutMs: 60_000,
      message: "three more epochs with n3 down",
    });
    await n3.start();
    await cluster.waitForMeta();
    const after = await allFolded("every epoch committed while n3 was down is folded");
    assert.ok(after >= before + 3, `${before} epochs before the stop, ${after} after`);
    const folded = await foldedEpochs();
    assert.equal(folded.distinct, folded.epochs.length);
  });

  test("a catalog node killed with SIGKILL and restarted resumes where it left off, nothing twice", async () => {
    await catalog.kill("SIGKILL");
    const committed = await commitCount();
    await waitFor(async () => (await commitCount()) >= committed + 3, {
      timeoutMs: 60_000,
      message: "epochs committed while the catalog node is down",
    });
    catalog = spawnNatsmon(["run", "--config", catalogConfig]);
    await catalog.waitForUrl();
    await allFolded("the backlog folded after the restart");
    const folded = await foldedEpochs();
    assert.equal(folded.distinct, folded.epochs.length, "no epoch folded twice");
  });
});
