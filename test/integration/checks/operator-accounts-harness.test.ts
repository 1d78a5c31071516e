/**
 * The operator-mode harness with an exporter and importers on a real 2.9.10 server, and what
 * ACCOUNTZ `{account}` reports for them. Accounts load lazily: an unused one "does not exist".
 * An import the server refuses (no token, an expired token, a missing exporter) is left out
 * of `imports` and the account is not `complete`; its JWT claim still lists it. `invalid` is
 * true only for an import that was accepted and lost its authorization later: here, a token
 * that expires while the account is loaded. A token signed by a key foreign to the exporter
 * fails the account JWT's validation: the account never loads and its users are refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createAccount } from "@nats-io/nkeys";
import {
  activationToken,
  startOperatorServer,
  type JwtImport,
  type OperatorServer,
} from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";

interface Import {
  subject: string;
  account: string;
  type: string;
  invalid: boolean;
}
interface Detail {
  complete: boolean;
  imports?: Import[];
  exports?: { subject: string; type: string; token_req?: boolean }[];
  decoded_jwt: { nats: { imports?: JwtImport[]; signing_keys?: string[] } };
}
interface Reply {
  data: { accounts?: string[]; account_detail?: Detail } | null;
  error?: { code: number; description: string };
}

const exp = createAccount();
const expSigning = createAccount();
const missing = createAccount();
const importers = ["VALID", "VALID_SK", "NOTOKEN", "EXPIRED", "EXPIRING", "MISSING", "FOREIGN"] as const;
const keys = Object.fromEntries(importers.map((n) => [n, createAccount()]));
const EXPIRING_IN_S = 6;

function imports(name: (typeof importers)[number], expiry: number): JwtImport[] {
  const orders: JwtImport = { subject: "orders.>", account: exp.getPublicKey(), type: "stream" };
  const token = (signer = exp, o: { exp?: number; issuerAccount?: string } = {}) =>
    activationToken(signer, {
      importer: keys[name]!.getPublicKey(),
      subject: "private.>",
      kind: "stream",
      ...o,
    });
  const priv = (t?: string): JwtImport => ({ ...orders, subject: "private.>", ...(t ? { token: t } : {}) });
  switch (name) {
    case "VALID":
      return [orders, priv(token())];
    case "VALID_SK":
      return [orders, priv(token(expSigning, { issuerAccount: exp.getPublicKey() }))];
    case "NOTOKEN":
      return [orders, priv()];
    case "EXPIRED":
      return [orders, priv(token(exp, { exp: expiry - 3600 }))];
    case "EXPIRING":
      return [orders, priv(token(exp, { exp: expiry + EXPIRING_IN_S }))];
    case "MISSING":
      return [orders, { subject: "ghost.>", account: missing.getPublicKey(), type: "stream" }];
    case "FOREIGN":
      return [orders, priv(token(createAccount()))];
  }
}

describe("operator-mode harness: exports, imports and activation tokens on a real 2.9.10", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  const users: NatsConnection[] = [];
  /** EXPIRING's imports just after it loaded, while its token was still valid. */
  let expiringAtLoad: [string, string, string, boolean][];

  async function accountz(account?: string): Promise<Reply> {
    const body = JSON.stringify(account ? { account } : {});
    return (await sys.request("$SYS.REQ.SERVER.PING.ACCOUNTZ", body, { timeout: 5000 })).json<Reply>();
  }
  async function detail(name: string): Promise<Detail> {
    const reply = await accountz(server.accountKey(name));
    assert.ok(reply.data?.account_detail, `${name}: ${JSON.stringify(reply.error)}`);
    return reply.data.account_detail;
  }
  const names = () => Object.fromEntries(Object.entries(server.accounts).map(([n, k]) => [k, n]));
  /** The account's own imports (not the $SYS ones every account gets), by subject. */
  async function ownImports(name: string): Promise<[string, string, string, boolean][]> {
    const byKey = names();
    return ((await detail(name)).imports ?? [])
      .filter((i) => !i.subject.startsWith("$SYS."))
      .map((i): [string, string, string, boolean] => [
        i.subject,
        byKey[i.account] ?? i.account,
        i.type,
        i.invalid,
      ])
      .sort((a, b) => a[0].localeCompare(b[0]));
  }

  before(async () => {
    const now = Math.floor(Date.now() / 1000);
    server = await startOperatorServer("opacc", {
      accounts: {
        EXP: {
          key: exp,
          signingKeys: [expSigning],
          exports: [
            { name: "orders", subject: "orders.>", type: "stream" },
            { name: "private", subject: "private.>", type: "stream", token_req: true },
            { name: "echo", subject: "svc.echo", type: "service" },
          ],
        },
        ...Object.fromEntries(importers.map((n) => [n, { key: keys[n], imports: imports(n, now) }])),
      },
    });
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    // Loaded at once, before its token expires.
    users.push(
      await connect({ servers: server.url, authenticator: server.user("EXPIRING", "u").authenticator }),
    );
    expiringAtLoad = await ownImports("EXPIRING");
  });

  after(async () => {
    for (const nc of users) await nc.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("accounts load lazily: ACCOUNTZ knows an unused account only once a user comes", async () => {
    assert.equal((await accountz(server.appAccount)).error?.code, 500);
    const reply = await accountz(server.accountKey("VALID"));
    assert.equal(reply.data, null);
    assert.deepEqual(reply.error, {
      code: 500,
      description: `Account ${server.accountKey("VALID")} does not exist`,
    });
    const unused = new Set((await accountz()).data?.accounts);
    assert.ok(!unused.has(server.accountKey("VALID")) && !unused.has(server.appAccount), "not loaded yet");
    users.push(
      await connect({ servers: server.url, authenticator: server.user("VALID", "u").authenticator }),
    );
    const listed = new Set((await accountz()).data?.accounts);
    assert.ok(listed.has(server.accountKey("VALID")), "the importer is loaded");
    assert.ok(listed.has(server.accountKey("EXP")), "and with it its exporter");
  });

  test("accepted imports are listed valid, refused ones are left out and the account incomplete", async () => {
    for (const n of ["VALID_SK", "NOTOKEN", "EXPIRED", "MISSING"]) {
      users.push(await connect({ servers: server.url, authenticator: server.user(n, "u").authenticator }));
    }
    const ok = (s: string): [string, string, string, boolean] => [s, "EXP", "stream", false];
    assert.deepEqual(await ownImports("VALID"), [ok("orders.>"), ok("private.>")]);
    assert.deepEqual(await ownImports("VALID_SK"), [ok("orders.>"), ok("private.>")]);
    for (const n of ["NOTOKEN", "EXPIRED", "MISSING"]) {
      assert.deepEqual(await ownImports(n), [ok("orders.>")], n);
      assert.equal((await detail(n)).complete, false, n);
    }
    assert.equal((await detail("VALID")).complete, true);
    const claimed = (await detail("NOTOKEN")).decoded_jwt.nats.imports?.map((i) => i.subject);
    assert.deepEqual(claimed, ["orders.>", "private.>"], "the JWT claim still has the refused import");
    const log = await server.log();
    assert.match(
      log,
      new RegExp(`Can't locate account \\[${missing.getPublicKey()}\\] for import of \\[ghost\\.>\\]`),
    );

    const exporter = await detail("EXP");
    assert.deepEqual(exporter.decoded_jwt.nats.signing_keys, [expSigning.getPublicKey()]);
    assert.deepEqual(exporter.exports?.map((e) => [e.subject, e.type, e.token_req ?? false]).sort(), [
      ["orders.>", "stream", false],
      ["private.>", "stream", true],
      ["svc.echo", "service", false],
    ]);
  });

  test("an import whose token expires while loaded turns invalid", async () => {
    assert.deepEqual(expiringAtLoad, [
      ["orders.>", "EXP", "stream", false],
      ["private.>", "EXP", "stream", false],
    ]);
    await waitFor(async () => (await ownImports("EXPIRING")).some((i) => i[3]), {
      timeoutMs: (EXPIRING_IN_S + 10) * 1000,
      message: "the expiring import to turn invalid",
    });
    assert.deepEqual(await ownImports("EXPIRING"), [
      ["orders.>", "EXP", "stream", false],
      ["private.>", "EXP", "stream", true],
    ]);
    assert.equal((await detail("EXPIRING")).complete, true);
  });

  test("a token signed by a foreign key makes the account JWT invalid: its users are refused", async () => {
    const user = server.user("FOREIGN", "u");
    await assert.rejects(
      connect({ servers: server.url, authenticator: user.authenticator }),
      /Authorization Violation/,
    );
    assert.match((await accountz(server.accountKey("FOREIGN"))).error?.description ?? "", /does not exist/);
    const log = await server.log();
    assert.match(log, new RegExp(`Account \\[${server.accountKey("FOREIGN")}\\] has validation issues`));
    assert.match(log, /activation token doesn't match account for import "private\.>"/);
  });
});
