import { test } from "node:test";
import assert from "node:assert/strict";
import { DuckDBTimestampTZValue, DuckDBTypeId } from "@duckdb/node-api";
import { foldEpoch, type ScrapeReply } from "../../../src/catalog/index.ts";
import { FoldContext } from "../../../src/catalog/fold-context.ts";
import { ENTITY_KINDS, KIND_NAMES, identTable } from "../../../src/catalog/kinds/entity-kinds.ts";
import { count, editReply, labEpoch, q, sourceReplies, tempCatalog, type LabBody } from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";

/** A value of each identity column type that fits, and values that do not. */
const FITS: Partial<Record<DuckDBTypeId, unknown>> = {
  [DuckDBTypeId.INTEGER]: 7,
  [DuckDBTypeId.BIGINT]: 7,
  [DuckDBTypeId.VARCHAR]: "x",
  [DuckDBTypeId.TIMESTAMP_TZ]: "2026-11-22T10:47:58.325733468Z",
};
const WRONG: Partial<Record<DuckDBTypeId, unknown[]>> = {
  [DuckDBTypeId.INTEGER]: ["7", { n: 7 }, [7], 1.5, 2 ** 31, -(2 ** 40), true],
  [DuckDBTypeId.BIGINT]: ["abc", { n: 7 }, [7], 1.5, 2n ** 64n, 1e300, true],
  [DuckDBTypeId.VARCHAR]: [7, { s: "x" }, ["x"], true],
  // Go's zero time means "never": NULL, which no identity may be.
  [DuckDBTypeId.TIMESTAMP_TZ]: ["not a time", 7, { t: 1 }, ["x"], "0001-01-01T00:00:00Z"],
};

test("every entity kind leaves out an entity whose identity field has a wrong type, and says why", async () => {
  await using t = await tempCatalog();
  await t.catalog.withWriter(async (writer) => {
    const epoch = new DuckDBTimestampTZValue(1_000_000n);
    const ctx = new FoldContext(writer.tables, writer.keys, epoch);
    let cases = 0;
    for (const kind of KIND_NAMES) {
      const shape = writer.tables.get(identTable(kind))!;
      const fields = shape.columns.filter((c) => c !== ENTITY_KINDS[kind].pk && c !== "first_epoch");
      const good = Object.fromEntries(fields.map((c) => [c, FITS[shape.types[shape.index.get(c)!]!.typeId]]));
      // The well-formed entity is kept: the kind and the test agree on what fits.
      assert.equal(typeof ctx.pk(kind, good, `good ${kind}`), "number", kind);
      for (const field of fields) {
        const typeId = shape.types[shape.index.get(field)!]!.typeId;
        for (const wrong of WRONG[typeId] ?? assert.fail(`no wrong values for ${typeId}`)) {
          const what = `${kind} with ${field} ${JSON.stringify(wrong, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`;
          const bad = new FoldContext(writer.tables, writer.keys, epoch);
          assert.equal(bad.pk(kind, { ...good, [field]: wrong }, what), undefined, what);
          assert.equal(bad.created, false, what);
          const [said] = bad.problems;
          assert.ok(said?.startsWith(`${what}: hx.${identTable(kind)}.${field}`), `${what}: ${said}`);
          assert.ok(said?.endsWith("left out of this epoch"), said);
          cases++;
        }
      }
      // A required field that is absent is left out too.
      const [first] = fields;
      if (first !== undefined && shape.notNull[shape.index.get(first)!]) {
        assert.equal(ctx.pk(kind, { ...good, [first]: undefined }, `${kind} without ${first}`), undefined);
      }
    }
    assert.ok(cases > 100, String(cases));
    // Only the well-formed entities were buffered: the append goes through.
    await writer.con.run("BEGIN TRANSACTION");
    try {
      assert.equal(await ctx.appendAll(writer.con), KIND_NAMES.length);
    } finally {
      await writer.con.run("ROLLBACK");
    }
  });
});

/** The lab's CONNZ with n1's first connection's cid (or start) replaced. */
function connz(field: "cid" | "start", value: unknown): ScrapeReply[] {
  return editReply(
    "connz",
    "n1",
    (body: LabBody) => {
      const connections = body.data.connections as Record<string, unknown>[];
      connections[0]![field] = value;
      return body;
    },
    [...sourceReplies("varz"), ...sourceReplies("connz")],
  );
}

for (const [field, value] of [
  ["cid", "abc"],
  ["cid", { id: 17 }],
  ["cid", [17]],
  ["cid", 17.5],
  ["cid", 2n ** 64n],
  ["start", "yesterday"],
  ["start", "0001-01-01T00:00:00Z"],
] as const) {
  test(`a connection whose ${field} is ${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))} is left out and the epoch folds with the rest`, async () => {
    await using t = await tempCatalog();
    const replies = connz(field, value);
    const all = (replies.filter((r) => r.source === "connz") as { body: LabBody }[]).reduce(
      (n, r) => n + (r.body.data.connections as unknown[]).length,
      0,
    );
    assert.equal((await foldEpoch(t.catalog, labEpoch(E1, 1, replies))).status, "folded");
    assert.equal(await count(t.catalog, "connection_ident"), all - 1);
    assert.equal(await count(t.catalog, "connection_stats"), all - 1);
    assert.equal(await count(t.catalog, "server_stats"), 6);
    const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
    const errors = epoch!.errors as string[];
    assert.ok(
      errors.some((e) => e.includes(`hx.connection_ident.${field}`) && e.endsWith("left out of this epoch")),
      JSON.stringify(errors),
    );
    // The next epoch, with the connection well-formed again, folds it.
    const E2 = "2026-11-22T11:02:23.000Z";
    const fine = [...sourceReplies("varz"), ...sourceReplies("connz")];
    assert.equal((await foldEpoch(t.catalog, labEpoch(E2, 2, fine))).status, "folded");
    assert.equal(await count(t.catalog, "connection_ident"), all);
  });
}

test("a closed connection, a route, a server and a service whose identity has a wrong type are left out, the rest folds", async () => {
  await using t = await tempCatalog();
  let replies = [...sourceReplies("varz"), ...sourceReplies("routez"), ...sourceReplies("connz")];
  replies = editReply(
    "routez",
    "n1",
    (body) => {
      for (const r of body.data.routes as Record<string, unknown>[]) r.pool_idx = 0.5;
      return body;
    },
    replies,
  );
  const closed = structuredClone(sourceReplies("connz").find((r) => r.server === "n1")!);
  const connections = (closed.body as LabBody).data.connections as Record<string, unknown>[];
  for (const c of connections) c.stop = "2026-11-22T11:02:12Z";
  connections[0]!.cid = "abc";
  replies.push({ ...closed, source: "connz_closed" });
  // A server, and a service's account, named by a number (a crafted part).
  const varz = structuredClone(sourceReplies("varz")[0]!);
  replies.push({ ...varz, server: 42 as unknown as string });
  replies.push({
    source: "services",
    server: 7 as unknown as string,
    body: { data: { services: [{ name: "svc", id: "abc", endpoints: [] }] } },
  });
  const input = labEpoch(E1, 1, replies);
  const answered = input.marker.servers_answered.filter((s) => typeof s === "string");
  const result = await foldEpoch(t.catalog, {
    ...input,
    marker: { ...input.marker, servers_answered: answered },
    retention: { retentionMs: 0, nowMs: Date.parse(E1) },
  });
  assert.equal(result.status, "folded");
  const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
  const errors = epoch!.errors as string[];
  for (const column of [
    "route_ident.pool_index",
    "connection_ident.cid",
    "server_ident.name",
    "service_ident.account",
  ]) {
    assert.ok(
      errors.some((e) => e.includes(`hx.${column}`) && e.endsWith("left out of this epoch")),
      `${column}: ${JSON.stringify(errors)}`,
    );
  }
  const routes = await q(
    t.catalog,
    "SELECT s.name, count(*)::INTEGER AS n FROM hx.route_ident JOIN hx.server_ident s USING (server_pk) GROUP BY ALL ORDER BY 1",
  );
  assert.ok(routes.length > 0 && routes.every((r) => r.name !== "n1"), JSON.stringify(routes));
  assert.equal(await count(t.catalog, "connection_closes"), connections.length - 1);
  assert.equal(await count(t.catalog, "server_ident"), 6);
  assert.equal(await count(t.catalog, "service_ident"), 0);
});
