import { test } from "node:test";
import assert from "node:assert/strict";
import { applyRetention, foldEpoch } from "../../../src/catalog/index.ts";
import { count, editReply, labReplies, LAB_SERVERS, marker, q, tempCatalog } from "./lab-epoch.ts";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 11, minute)).toISOString();

test("retention removes the epochs before the cutoff and nothing else", async () => {
  await using t = await tempCatalog();
  // Four epochs; the third changes ORDERS' configuration, so stream_opts gets a second row.
  for (const [i, minute] of [0, 1, 2, 3].entries()) {
    // Every server's copy of ORDERS' config moves from max_msgs 100000 to 200000.
    const raise = (body: unknown) =>
      JSON.parse(
        JSON.stringify(body, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)).replaceAll(
          '"max_msgs":100000',
          '"max_msgs":200000',
        ),
      ) as unknown;
    const replies =
      i >= 2
        ? LAB_SERVERS.reduce((acc, server) => editReply("jsz", server, raise, acc), labReplies())
        : labReplies();
    const result = await foldEpoch(t.catalog, {
      markerSeq: i + 1,
      marker: marker(at(minute), replies),
      replies,
    });
    assert.equal(result.status, "folded");
  }
  const before = {
    servers: await count(t.catalog, "server_ident"),
    streams: await count(t.catalog, "stream_ident"),
    stats: await count(t.catalog, "server_stats"),
    streamOpts: await count(t.catalog, "stream_opts"),
    configured: Number(
      (await q(t.catalog, "SELECT count(DISTINCT stream_pk)::INTEGER AS n FROM hx.stream_opts"))[0]?.n,
    ),
  };

  // Keep the last two epochs (minutes 2 and 3).
  const result = await applyRetention(t.catalog, new Date(at(2)));
  assert.equal(result.epochs, 2);

  assert.deepEqual(
    (await q(t.catalog, "SELECT epoch FROM hx.epochs ORDER BY epoch")).map((r) => r.epoch),
    [at(2), at(3)],
  );
  for (const table of ["server_stats", "stream_stats", "consumer_stats"]) {
    const left = await q(t.catalog, `SELECT DISTINCT epoch FROM hx.${table} ORDER BY epoch`);
    assert.deepEqual(
      left.map((r) => r.epoch),
      [at(2), at(3)],
      table,
    );
  }
  assert.equal(await count(t.catalog, "server_stats"), before.stats / 2);
  // Identities stay; every kept epoch still finds the configuration in force.
  assert.equal(await count(t.catalog, "server_ident"), before.servers);
  assert.equal(await count(t.catalog, "stream_ident"), before.streams);
  // ORDERS' first configuration was superseded at the cutoff epoch itself, so it went.
  assert.equal(before.streamOpts, before.configured + 1);
  assert.equal(await count(t.catalog, "stream_opts"), before.configured);
  const orders = await q(
    t.catalog,
    "SELECT epoch, max_msgs FROM hx.streams WHERE stream = 'ORDERS' ORDER BY epoch",
  );
  assert.deepEqual(
    orders.map((r) => r.max_msgs),
    [200000, 200000],
  );

  // Cutting again keeps the configuration each stream has in force.
  await applyRetention(t.catalog, new Date(at(3)));
  assert.equal(await count(t.catalog, "stream_opts"), before.configured);
  assert.deepEqual(
    (await q(t.catalog, "SELECT count(*)::INTEGER AS n FROM hx.servers WHERE version IS NULL")).map(
      (r) => r.n,
    ),
    [0],
  );
});
