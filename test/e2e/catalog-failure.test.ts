import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { PING_SUBJECT, systemSubjects, type DiscoveryReply } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";

test("a catalog file that will not open leaves the node up, reports catalog_error and answers db.query and checks.findings with 503", async () => {
  await using dir = await tempDir();
  await writeFile(join(dir.path, "local.duckdb"), "this is not a DuckDB file, it is garbage".repeat(200));
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], { NATSMON_SINK_EMBEDDED_PORT: "-1" });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const ping = (await nc.request(PING_SUBJECT, "", { timeout: 2000 })).json<DiscoveryReply>();
    assert.equal(ping.systems[0]?.id, "local");
    assert.deepEqual(ping.systems[0]?.roles, ["scrape", "catalog"]);
    assert.ok(ping.systems[0]?.catalog_error, "catalog_error is set");
    // The node holds the catalog though its database is not open (the spec's own wording for
    // the 503): capabilities are the ops.info of that system, as for an open one.
    const info = await nc.request(systemSubjects("local").opsInfo, "", { timeout: 5000 });
    assert.deepEqual(ping.capabilities, info.json());
    assert.deepEqual(Object.keys(ping.capabilities).sort(), ["checks", "db", "geo", "realtime", "scraper"]);
    const reply = await nc.request(systemSubjects("local").dbQuery, JSON.stringify({ sql: "SELECT 1" }), {
      timeout: 5000,
    });
    assert.equal(reply.headers?.get("Nats-Service-Error-Code"), "503");
    assert.match(reply.headers?.get("Nats-Service-Error") ?? "", /not open/);
    // checks.findings needs the database too (spec: Errors); the check list does not.
    const findings = await nc.request(
      systemSubjects("local").checksFindings,
      JSON.stringify({ code: "server-007" }),
      { timeout: 5000 },
    );
    assert.equal(findings.headers?.get("Nats-Service-Error-Code"), "503");
    assert.match(findings.headers?.get("Nats-Service-Error") ?? "", /not open/);
    const list = await nc.request(systemSubjects("local").checksList, "", { timeout: 5000 });
    assert.equal(list.headers?.get("Nats-Service-Error-Code") ?? undefined, undefined);
  } finally {
    await nc.close();
  }
});
