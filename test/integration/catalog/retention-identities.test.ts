import { test } from "node:test";
import assert from "node:assert/strict";
import {
  applyRetention,
  entityKinds,
  foldEpoch,
  pkReferences,
  type Catalog,
  type ScrapeReply,
} from "../../../src/catalog/index.ts";
import { ENTITY_KINDS } from "../../../src/catalog/kinds/entity-kinds.ts";
import { count, labEpoch, labReplies, q, tempCatalog, sourceReplies } from "./lab-epoch.ts";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 11, minute)).toISOString();

interface Connz {
  server: Record<string, unknown>;
  data: { connections: Record<string, unknown>[] } & Record<string, unknown>;
}

/**
 * The lab epoch with CONNZ, ACCSTATZ, ACCOUNTZ and SUBSZ. Besides the lab's six servers,
 * CONNZ comes from servers known only by their connections (a copy of l1's reply under
 * another name; they never send VARZ, so they have no server_stats at all): a-stays and
 * z-tail in every epoch, b-gone only when `old`. n1's cid 53 (from 10.0.0.9) too is there
 * only when `old`.
 */
function epochReplies(old: boolean): ScrapeReply[] {
  const connz = sourceReplies("connz").map((r) => {
    if (r.server !== "n1") return r;
    const body = structuredClone(r.body) as Connz;
    body.data.connections = body.data.connections
      .filter((c) => old || c.cid !== 53)
      .map((c) => (c.cid === 53 ? { ...c, ip: "10.0.0.9" } : c));
    return { ...r, body };
  });
  const l1 = connz.find((r) => r.server === "l1")!;
  const copies = ["a-stays", "z-tail", ...(old ? ["b-gone"] : [])].map((server) => {
    const body = structuredClone(l1.body) as Connz;
    body.server = { ...body.server, name: server };
    return { ...l1, server, body };
  });
  return [
    ...labReplies(),
    ...connz,
    ...copies,
    ...sourceReplies("accstatz"),
    ...sourceReplies("accountz"),
    ...sourceReplies("subsz"),
  ];
}

async function pkOf(catalog: Catalog, sql: string): Promise<number | undefined> {
  return (await q(catalog, sql))[0]?.pk as number | undefined;
}

const CID_53 = `SELECT connection_pk AS pk FROM hx.connection_ident i JOIN hx.server_ident s USING (server_pk)
                 WHERE s.name = 'n1' AND i.cid = 53`;
const PUBLISHER = `SELECT connection_pk AS pk FROM hx.connection_ident i JOIN hx.server_ident s USING (server_pk)
                    WHERE s.name = 'n1' AND i.cid = 17`;
const server = (name: string) => `SELECT server_pk AS pk FROM hx.server_ident WHERE name = '${name}'`;

test("retention removes ended identities with their _opts, the key cache entries and old addresses", async () => {
  await using t = await tempCatalog();
  for (const minute of [0, 1, 2, 3]) {
    const result = await foldEpoch(t.catalog, labEpoch(at(minute), minute + 1, epochReplies(minute < 2)));
    assert.equal(result.status, "folded");
  }
  const gone = { cid53: await pkOf(t.catalog, CID_53), server: await pkOf(t.catalog, server("b-gone")) };
  const kept = {
    publisher: await pkOf(t.catalog, PUBLISHER),
    server: await pkOf(t.catalog, server("a-stays")),
  };
  const max = async (kind: "connection" | "server") =>
    (await q(t.catalog, `SELECT max(${kind}_pk) AS pk FROM hx.${kind}_ident`))[0]?.pk as number;
  // Preconditions: none of them holds its kind's highest pk (which retention always keeps),
  // and a-stays has no server_stats at all, only connections that refer to it.
  assert.ok(gone.cid53! < (await max("connection")) && gone.server! < (await max("server")));
  assert.ok(kept.server! < (await max("server")));
  assert.equal(await count(t.catalog, `server_stats WHERE server_pk = ${kept.server}`), 0);
  const before = {
    connections: await count(t.catalog, "connection_ident"),
    servers: await count(t.catalog, "server_ident"),
    idents: await identCount(t.catalog),
  };
  assert.equal(await count(t.catalog, `connection_opts WHERE connection_pk = ${gone.cid53}`), 1);

  const result = await applyRetention(t.catalog, new Date(at(2)));
  // cid 53, b-gone's connection and b-gone itself, which only that connection referred to.
  assert.deepEqual({ ...result, rows: undefined }, { epochs: 2, identities: 3, ips: 1, rows: undefined });
  assert.equal(await identCount(t.catalog), before.idents - 3);
  assert.equal(await count(t.catalog, "connection_ident"), before.connections - 2);
  assert.equal(await count(t.catalog, "server_ident"), before.servers - 1);
  assert.equal(await pkOf(t.catalog, CID_53), undefined);
  assert.equal(await pkOf(t.catalog, server("b-gone")), undefined);
  assert.equal(await count(t.catalog, `connection_opts WHERE connection_pk = ${gone.cid53}`), 0);
  assert.equal(await pkOf(t.catalog, server("a-stays")), kept.server);
  assert.equal(await pkOf(t.catalog, PUBLISHER), kept.publisher);
  assert.deepEqual(
    (await q(t.catalog, "SELECT ip FROM main.ips ORDER BY ip")).map((r) => r.ip),
    ["127.0.0.1"],
  );
  await assertNoDanglingReferences(t.catalog);
  // The writer's cache holds exactly the identities left.
  const cached = await t.catalog.withWriter(({ keys }) =>
    Promise.resolve({
      connections: keys.connection.pks.size,
      servers: keys.server.pks.size,
      cid53Opts: keys.connection.opts.has(gone.cid53!),
    }),
  );
  assert.deepEqual(cached, {
    connections: before.connections - 2,
    servers: before.servers - 1,
    cid53Opts: false,
  });

  // Seen again, cid 53 (same server, cid and start) and b-gone are new entities with new pks.
  const again = await foldEpoch(t.catalog, labEpoch(at(4), 5, epochReplies(true)));
  assert.equal(again.status, "folded");
  const [epoch] = await q(t.catalog, `SELECT errors FROM hx.epochs WHERE epoch = '${at(4)}'`);
  assert.deepEqual(epoch?.errors, []);
  const cid53 = await pkOf(t.catalog, CID_53);
  assert.ok(cid53 !== undefined && cid53 > gone.cid53!, `cid 53 got pk ${cid53}, had ${gone.cid53}`);
  const bGone = await pkOf(t.catalog, server("b-gone"));
  assert.ok(bGone !== undefined && bGone > gone.server!);
  assert.equal(await pkOf(t.catalog, PUBLISHER), kept.publisher);
  assert.deepEqual(await q(t.catalog, `SELECT name, ip FROM hx.connections WHERE connection_pk = ${cid53}`), [
    { name: "other-n1", ip: "10.0.0.9" },
  ]);
  // A second run with the same cutoff finds nothing more to remove.
  assert.deepEqual(await applyRetention(t.catalog, new Date(at(2))), {
    epochs: 0,
    rows: 0,
    identities: 0,
    ips: 0,
  });
});

test("every *_pk column of the schema is a kind's pk or a reference retention knows of", async () => {
  await using t = await tempCatalog();
  await t.catalog.withReader(async (con) => {
    const kinds = await entityKinds(con);
    assert.deepEqual(
      Object.fromEntries(kinds.map((k) => [k.name, k.pk])),
      Object.fromEntries(Object.entries(ENTITY_KINDS).map(([name, kind]) => [name, kind.pk])),
    );
    const references = await pkReferences(con, kinds);
    const known = new Set(references.map((r) => `${r.table}.${r.column}`));
    const own = new Set(
      kinds.flatMap((k) => ["_ident", "_opts", "_stats"].map((s) => `${k.name}${s}.${k.pk}`)),
    );
    const columns = (
      await con.runAndReadAll(
        `SELECT c.table_name || '.' || c.column_name FROM duckdb_columns() c
           JOIN duckdb_tables() t ON t.schema_name = c.schema_name AND t.table_name = c.table_name
          WHERE c.schema_name = 'hx' AND c.column_name LIKE '%\\_pk' ESCAPE '\\'`,
      )
    ).getRowsJS() as [string][];
    // A pk column named otherwise (say `source_pk` for a stream) would go unnoticed by
    // retention, which could then remove the identity it refers to: rename it.
    const unknown = columns.map(([c]) => c).filter((c) => !known.has(c) && !own.has(c));
    assert.deepEqual(unknown, []);
    // The references that matter most, so that a change in discovery shows.
    for (const expected of [
      "connection_ident.server_pk",
      "stream_stats.leader_server_pk",
      "account_stats.server_pk",
      "consumer_ident.stream_pk",
      "stream_replica_ident.stream_pk",
      "raft_group_ident.consumer_pk",
      "service_endpoint_ident.service_pk",
      "subscription_stats.server_pk",
    ]) {
      assert.ok(known.has(expected), expected);
    }
  });
});

async function identCount(catalog: Catalog): Promise<number> {
  let total = 0;
  for (const kind of Object.keys(ENTITY_KINDS)) total += await count(catalog, `${kind}_ident`);
  return total;
}

/** Every pk a row refers to still has its _ident row. */
async function assertNoDanglingReferences(catalog: Catalog): Promise<void> {
  const references = await catalog.withReader(async (con) => pkReferences(con, await entityKinds(con)));
  const pkColumn = (kind: string) => (ENTITY_KINDS as Record<string, { pk: string }>)[kind]!.pk;
  for (const r of references) {
    const dangling = await count(
      catalog,
      `${r.table} r WHERE r.${r.column} IS NOT NULL AND NOT EXISTS (
         SELECT 1 FROM hx.${r.kind}_ident i WHERE i.${pkColumn(r.kind)} = r.${r.column})`,
    );
    assert.equal(dangling, 0, `${r.table}.${r.column} → ${r.kind}`);
  }
}
