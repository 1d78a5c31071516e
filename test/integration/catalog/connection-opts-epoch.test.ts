/**
 * Each hx.connection_stats row names the hx.connection_opts row in force (`opts_epoch`,
 * migration 38), which hx.connections joins by equality: the fold writes it from the key
 * cache, also after a restart has loaded the cache from the file. The key cache keeps the
 * input rows of the connections the last fold saw only. Real nats-server, real scrapes, a
 * real DuckDB file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { foldEpoch, openCatalog, type Catalog } from "../../../src/catalog/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { APP_USER, startTestServer, SYS_USER } from "../../harness/start-nats-server.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { q, TEST_DB } from "./lab-epoch.ts";
import { scrapeOneEpoch } from "./live-scrape.ts";

test("each connection's stats row names its configuration in force, across a restart, and the key cache forgets closed connections", async () => {
  await using server = await startTestServer("s1");
  const app = { user: APP_USER.user, pass: APP_USER.password };
  const monitored = await connect({
    servers: server.url,
    name: "scraper",
    user: SYS_USER.user,
    pass: SYS_USER.password,
  });
  const changing = await connect({ servers: server.url, name: "changing", ...app });
  const leaving = await connect({ servers: server.url, name: "leaving", ...app });
  await using dir = await tempDir("natsmon-opts-epoch-");
  const path = join(dir.path, "c.duckdb");
  let catalog: Catalog = await openCatalog({ path, db: TEST_DB });
  let seq = 0;
  const fold = async () => {
    for (const nc of [changing, leaving, monitored]) if (!nc.isClosed()) await nc.flush();
    const { marker, replies } = await scrapeOneEpoch(monitored, SOURCES);
    const result = await foldEpoch(catalog, { markerSeq: ++seq, marker, replies });
    assert.equal(result.status, "folded");
  };
  try {
    changing.subscribe("orders.a");
    await fold(); // 1
    await fold(); // 2: nothing changed
    changing.subscribe("orders.b");
    await fold(); // 3: changing's configuration changed
    // A restart: the key cache is loaded from the file.
    await catalog[Symbol.asyncDispose]();
    catalog = await openCatalog({ path, db: TEST_DB });
    await fold(); // 4: nothing changed
    await leaving.close();
    changing.subscribe("orders.c");
    await fold(); // 5: leaving is gone, changing changed again

    const shown = await q(
      catalog,
      `SELECT e.n, c.subjects
       FROM hx.connections c JOIN (SELECT epoch, row_number() OVER (ORDER BY epoch) AS n FROM hx.epochs) e USING (epoch)
       WHERE c.name = 'changing' ORDER BY e.n`,
    );
    assert.deepEqual(
      shown.map((r) => [Number(r.n), r.subjects]),
      [
        [1, ["orders.a"]],
        [2, ["orders.a"]],
        [3, ["orders.a", "orders.b"]],
        [4, ["orders.a", "orders.b"]],
        [5, ["orders.a", "orders.b", "orders.c"]],
      ],
    );
    // Every row names the row an ASOF join finds, the one in force, and none is without one.
    const [named] = await q(
      catalog,
      `SELECT count(*) AS n, count(s.opts_epoch) AS named,
              count(*) FILTER (WHERE s.opts_epoch IS DISTINCT FROM o.epoch) AS wrong
       FROM hx.connection_stats s
       ASOF LEFT JOIN hx.connection_opts o ON o.connection_pk = s.connection_pk AND s.epoch >= o.epoch`,
    );
    assert.ok(Number(named!.n) >= 10, `${Number(named!.n)} connection rows`);
    assert.equal(named!.named, named!.n);
    assert.equal(named!.wrong, 0);

    const last = await q(
      catalog,
      "SELECT connection_pk AS pk FROM hx.connection_stats WHERE epoch = (SELECT max(epoch) FROM hx.epochs) ORDER BY 1",
    );
    const gone = await q(
      catalog,
      "SELECT connection_pk AS pk FROM hx.connections WHERE name = 'leaving' LIMIT 1",
    );
    assert.equal(gone.length, 1);
    const cached = await catalog.withWriter(({ keys }) =>
      Promise.resolve([...keys.connection.raw.keys()].sort((a, b) => a - b)),
    );
    assert.deepEqual(
      cached,
      last.map((r) => Number(r.pk)),
      "the input rows kept are those of the connections the last fold saw",
    );
    assert.ok(!cached.includes(Number(gone[0]!.pk)));
  } finally {
    await catalog[Symbol.asyncDispose]();
    for (const nc of [changing, leaving, monitored]) if (!nc.isClosed()) await nc.close();
  }
});
