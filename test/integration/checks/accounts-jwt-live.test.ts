/**
 * Account exports and imports on a real nats-server 2.9.10 in operator mode, scraped with
 * natsmon's own requests (ACCOUNTZ per account) and folded:
 * - hx.account_exports / hx.account_imports hold the exporter's exports and the importers'
 *   imports, a refused import with the server among its inactive_servers;
 * - accounts-003 fires for each refused import with its cause (no token, an expired token,
 *   a token signed by a key the exporter does not hold, a missing exporter), not for valid ones;
 * - accounts-004 fires for an export no loaded account imports, and stops once its importer
 *   is loaded;
 * - accounts-005 fires for an active stream import nobody in the importer subscribes to,
 *   and stops once a client of the importer subscribes (or a JetStream stream of the
 *   importer captures its subjects);
 * - and, on a second server, accounts-003 fires with "expired token" for an import whose
 *   token expired while the importer was loaded (the server marks it invalid), folded at
 *   the scrape's own epoch since the cause compares the token's expiry with it.
 * Every importer has a user connected: the server loads an account only then.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createAccount } from "@nats-io/nkeys";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import {
  activationToken,
  startOperatorServer,
  type JwtImport,
  type OperatorServer,
} from "../../harness/operator-mode.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const check = (code: string): Check => CHECKS.find((c) => c.code === code)!;
const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accountz", "accstatz", "jsz"].includes(s.name));

const exp = createAccount();
const expSigning = createAccount();
const missing = createAccount();
const importers = ["VALID", "VALID_SK", "NOTOKEN", "EXPIRED", "ROTATED", "MISSING", "LATE"] as const;
type Importer = (typeof importers)[number];
const keys = Object.fromEntries(importers.map((n) => [n, createAccount()])) as Record<
  Importer,
  ReturnType<typeof createAccount>
>;
/** Expired before the fixture epochs (2026-01-01) as well as now. */
const EXPIRED_AT = Date.UTC(2025, 5, 1) / 1000;

function importsOf(name: Importer): JwtImport[] {
  const stream = (subject: string, account = exp.getPublicKey()): JwtImport => ({
    subject,
    account,
    type: "stream",
  });
  const priv = (token?: string): JwtImport => ({ ...stream("private.>"), ...(token ? { token } : {}) });
  const token = (signer = exp, o: { exp?: number; issuerAccount?: string } = {}) =>
    activationToken(signer, {
      importer: keys[name].getPublicKey(),
      subject: "private.>",
      kind: "stream",
      ...o,
    });
  switch (name) {
    case "VALID":
      return [
        stream("orders.>"),
        priv(token()),
        { subject: "svc.echo", account: exp.getPublicKey(), type: "service", local_subject: "echo" },
      ];
    case "VALID_SK":
      return [priv(token(expSigning, { issuerAccount: exp.getPublicKey() }))];
    case "NOTOKEN":
      return [priv()];
    case "EXPIRED":
      return [priv(token(exp, { exp: EXPIRED_AT }))];
    case "ROTATED":
      return [priv(token(createAccount(), { issuerAccount: exp.getPublicKey() }))];
    case "MISSING":
      return [stream("ghost.>", missing.getPublicKey())];
    case "LATE":
      return [stream("late.>")];
  }
}

/** Rows in order of their first columns, compared as strings. */
const byColumns = (a: readonly unknown[], b: readonly unknown[]): number => {
  const [x, y] = [a, b].map((r) => r.map(String).join("\u0000"));
  return x! < y! ? -1 : x! > y! ? 1 : 0;
};

describe("account exports and imports on a real 2.9.10 server in operator mode", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  const users = new Map<string, NatsConnection>();
  let byKey: Record<string, string>;
  let storeDir: AsyncDisposable & { path: string };

  async function scrape(): Promise<FixtureEpoch> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, marker: { servers_expected: [server.name] } };
  }
  async function fired(epoch: FixtureEpoch, code: string): Promise<Record<string, unknown>[]> {
    await using fixture = await catalogWith([epoch]);
    return await runCheck(fixture.catalog, check(code), fixture.epochs.at(-1)!);
  }
  async function query(epoch: FixtureEpoch, sql: string): Promise<Record<string, unknown>[]> {
    await using fixture = await catalogWith([epoch]);
    return await fixture.catalog.withReader(async (con) => (await con.runAndReadAll(sql)).getRowObjectsJS());
  }
  const name = (key: unknown) => byKey[String(key)] ?? String(key);

  before(async () => {
    storeDir = await tempDir("natsmon-accjwt-js-");
    server = await startOperatorServer("accjwt", {
      accounts: {
        EXP: {
          key: exp,
          signingKeys: [expSigning],
          exports: [
            { name: "orders", subject: "orders.>", type: "stream" },
            { name: "private", subject: "private.>", type: "stream", token_req: true },
            { name: "echo", subject: "svc.echo", type: "service" },
            { name: "unused", subject: "unused.>", type: "stream" },
            { name: "late", subject: "late.>", type: "stream" },
          ],
        },
        ...Object.fromEntries(importers.map((n) => [n, { key: keys[n], imports: importsOf(n) }])),
        // VALID may have streams (a stream may capture an import).
        VALID: {
          key: keys.VALID,
          imports: importsOf("VALID"),
          limits: { mem_storage: -1, streams: -1, consumer: -1 },
        },
      },
      config: [`jetstream: { store_dir: "${storeDir.path}" }`],
    });
    byKey = Object.fromEntries(Object.entries(server.accounts).map(([n, k]) => [k, n]));
    byKey[missing.getPublicKey()] = "MISSING_EXP";
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    for (const n of importers.filter((i) => i !== "LATE")) {
      users.set(n, await connect({ servers: server.url, authenticator: server.user(n, "u").authenticator }));
    }
  });

  after(async () => {
    for (const nc of users.values()) await nc.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
    await storeDir?.[Symbol.asyncDispose]();
  });

  /** The fold's rows of a view, the accounts' and exporters' keys turned into their names. */
  async function rows(epoch: FixtureEpoch, sql: string, columns: readonly string[]): Promise<unknown[][]> {
    return (await query(epoch, sql))
      .map((r) => columns.map((c) => (c === "account" || c === "exporter" ? name(r[c]) : r[c])))
      .sort((a, b) => byColumns(a, b));
  }

  test("the fold keeps the exporter's exports and the importers' imports, refused ones inactive on the server", async () => {
    const epoch = await scrape();
    const exports = await rows(epoch, "SELECT * FROM hx.account_exports WHERE subject NOT LIKE '$%'", [
      "account",
      "subject",
      "type",
      "name",
      "token_req",
      "servers",
      "importers",
    ]);
    assert.deepEqual(exports, [
      ["EXP", "late.>", "stream", "late", false, 1, 0],
      ["EXP", "orders.>", "stream", "orders", false, 1, 1],
      // VALID, VALID_SK and the three refused importers.
      ["EXP", "private.>", "stream", "private", true, 1, 5],
      ["EXP", "svc.echo", "service", "echo", false, 1, 1],
      ["EXP", "unused.>", "stream", "unused", false, 1, 0],
    ]);
    const imports = await rows(epoch, "SELECT * FROM hx.account_imports WHERE subject NOT LIKE '$%'", [
      "account",
      "exporter",
      "subject",
      "local_subject",
      "type",
      "declared",
      "token",
      "token_expires",
      "token_signer_known",
      "inactive_servers",
      "export_found",
    ]);
    const on: string[] = [];
    const off = [server.name];
    const expired = new Date(EXPIRED_AT * 1000);
    assert.deepEqual(imports, [
      ["EXPIRED", "EXP", "private.>", "", "stream", true, true, expired, true, off, true],
      ["MISSING", "MISSING_EXP", "ghost.>", "", "stream", true, false, null, null, off, null],
      ["NOTOKEN", "EXP", "private.>", "", "stream", true, false, null, null, off, true],
      ["ROTATED", "EXP", "private.>", "", "stream", true, true, null, false, off, true],
      ["VALID", "EXP", "orders.>", "", "stream", true, false, null, null, on, true],
      ["VALID", "EXP", "private.>", "", "stream", true, true, null, true, on, true],
      // The server lists a service import local subject first; the fold names it as the JWT does.
      ["VALID", "EXP", "svc.echo", "echo", "service", true, false, null, null, on, true],
      ["VALID_SK", "EXP", "private.>", "", "stream", true, true, null, true, on, true],
    ]);
  });

  test("accounts-003 fires for each refused import with its cause, not for the valid ones", async () => {
    const epoch = await scrape();
    const found = (await fired(epoch, "accounts-003")).map((r) => [
      name(r.entity_name),
      r.entity_key === `${String(r.type)} ${String(r.subject)} from ${String(r.exporter)}`,
      name(r.exporter),
      r.subject,
      r.cause,
      r.token_expires,
      r.servers,
    ]);
    const off = [server.name];
    assert.deepEqual(
      found.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ["EXPIRED", true, "EXP", "private.>", "expired token", new Date(EXPIRED_AT * 1000), off],
        ["MISSING", true, "MISSING_EXP", "ghost.>", "exporter missing", null, off],
        ["NOTOKEN", true, "EXP", "private.>", "no activation token", null, off],
        ["ROTATED", true, "EXP", "private.>", "token signed by a rotated key", null, off],
      ],
    );
  });

  test("accounts-004 fires for the exports no loaded account imports, and not once the importer loads", async () => {
    const orphans = async () =>
      (await fired(await scrape(), "accounts-004"))
        .map((r) => [name(r.entity_name), r.entity_key, r.subject, r.type, r.token_req, r.servers])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    assert.deepEqual(await orphans(), [
      ["EXP", "stream late.>", "late.>", "stream", false, 1],
      ["EXP", "stream unused.>", "unused.>", "stream", false, 1],
    ]);
    // LATE imports late.>: once one of its users connects, the server loads it.
    users.set(
      "LATE",
      await connect({ servers: server.url, authenticator: server.user("LATE", "u").authenticator }),
    );
    assert.deepEqual(await orphans(), [["EXP", "stream unused.>", "unused.>", "stream", false, 1]]);
  });

  test("accounts-005 fires for an active stream import nobody subscribes to, not once a client does", async () => {
    const idle = async () =>
      (await fired(await scrape(), "accounts-005"))
        .filter((r) => name(r.entity_name) === "VALID")
        .map((r) => [
          r.entity_key === `stream ${String(r.subject)} from ${exp.getPublicKey()}`,
          r.subject,
          r.local_subject,
        ])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    // Refused imports are accounts-003's; the service import's subscribers are the exporter's.
    assert.deepEqual(await idle(), [
      [true, "orders.>", "orders.>"],
      [true, "private.>", "private.>"],
    ]);
    const valid = users.get("VALID")!;
    valid.subscribe("orders.eu.*");
    await valid.flush();
    assert.deepEqual(await idle(), [[true, "private.>", "private.>"]]);
    // A stream of VALID capturing the other import's subjects.
    const jsm = await jetstreamManager(valid);
    await jsm.streams.add({ name: "PRIVATE", subjects: ["private.>"], storage: StorageType.Memory });
    assert.deepEqual(await idle(), []);
  });
});

describe("an activation token that expires while its importer is loaded, on a real 2.9.10 server", () => {
  const exporter = createAccount();
  const importer = createAccount();
  let server: OperatorServer;
  let sys: NatsConnection;
  let user: NatsConnection;
  let expires: number;

  before(async () => {
    // Long enough for the server to start and load the importer while the token is valid.
    expires = Math.floor(Date.now() / 1000) + 8;
    const token = activationToken(exporter, {
      importer: importer.getPublicKey(),
      subject: "private.>",
      kind: "stream",
      exp: expires,
    });
    server = await startOperatorServer("accjwtexp", {
      accounts: {
        EXP: { key: exporter, exports: [{ subject: "private.>", type: "stream", token_req: true }] },
        EXPIRING: {
          key: importer,
          imports: [{ subject: "private.>", account: exporter.getPublicKey(), type: "stream", token }],
        },
      },
    });
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    // Loaded at once, while the token is valid: the server accepts the import.
    user = await connect({ servers: server.url, authenticator: server.user("EXPIRING", "u").authenticator });
  });

  after(async () => {
    await user?.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("accounts-003 fires with an expired token once the server marks the import invalid", async () => {
    await waitFor(
      async () => {
        const reply = await sys.request(
          "$SYS.REQ.SERVER.PING.ACCOUNTZ",
          JSON.stringify({ account: importer.getPublicKey() }),
        );
        const detail = reply.json<{
          data: { account_detail: { imports?: { subject: string; invalid: boolean }[] } };
        }>();
        return detail.data.account_detail.imports?.some((i) => i.subject === "private.>" && i.invalid);
      },
      { timeoutMs: 60_000, message: "the import to turn invalid when its token expires" },
    );
    // Folded at the scrape's own epoch: the token's expiry is compared with it.
    const { marker, replies } = await scrapeOneEpoch(sys, SCRAPED);
    await using fixture = await catalogWith([]);
    const result = await foldEpoch(fixture.catalog, { markerSeq: 1, marker, replies });
    assert.equal(result.status, "folded");
    const rows = await runCheck(fixture.catalog, check("accounts-003"), marker.epoch);
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.subject, r.exporter, r.cause, r.token_expires, r.servers]),
      [
        [
          // The JWT's name tag, from ACCOUNTZ's detail.
          "EXPIRING",
          "private.>",
          exporter.getPublicKey(),
          "expired token",
          new Date(expires * 1000),
          [server.name],
        ],
      ],
    );
  });
});
