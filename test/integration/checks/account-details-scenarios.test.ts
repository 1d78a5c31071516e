/**
 * How the fold names an account's imports whichever side lists them: JWT imports in the
 * legacy form (a stream import's `to` as a prefix, a service import's `to` as the exporter's
 * subject) are the imports the server lists, not refused copies of them; and a service
 * import as 2.9.17 and later list it (exporter's subject first) is the one 2.9.10 lists the
 * other way round.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { catalogWith, runCheck } from "./check-harness.ts";
import { CHECKS } from "../../../src/checks/index.ts";
import { withDetails } from "./fixtures/account-details.ts";

const accounts003 = CHECKS.find((c) => c.code === "accounts-003")!;

test("legacy JWT imports (a stream prefix, a service `to`) match the imports the server lists", async () => {
  await using fixture = await catalogWith([
    withDetails({
      APP: {
        declared: [
          { subject: "orders.>", account: "OTHER", type: "stream", to: "acme" },
          { subject: "echo", account: "OTHER", type: "service", to: "svc.echo" },
        ],
        imports: [
          {
            subject: "orders.>",
            account: "OTHER",
            local_subject: "acme.orders.>",
            type: "stream",
            invalid: false,
          },
          { subject: "echo", account: "OTHER", to: "svc.echo", type: "service", invalid: false },
        ],
      },
      OTHER: {
        exports: [
          { subject: "orders.>", type: "stream" },
          { subject: "svc.echo", type: "service" },
        ],
      },
    }),
  ]);
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        "SELECT subject, local_subject, type, declared, inactive_servers, export_found FROM hx.account_imports ORDER BY type",
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(rows, [
    {
      subject: "svc.echo",
      local_subject: "echo",
      type: "service",
      declared: true,
      inactive_servers: [],
      export_found: true,
    },
    {
      subject: "orders.>",
      local_subject: "acme.orders.>",
      type: "stream",
      declared: true,
      inactive_servers: [],
      export_found: true,
    },
  ]);
  assert.deepEqual(await runCheck(fixture.catalog, accounts003, fixture.epochs[0]!), []);
});

test("a mapped service import as 2.9.17+ lists it is the import its JWT declares", async () => {
  await using fixture = await catalogWith([
    withDetails({
      APP: {
        declared: [{ subject: "svc.>", account: "OTHER", type: "service", local_subject: "local.>" }],
        imports: [
          {
            subject: "svc.>",
            account: "OTHER",
            to: "local.>",
            local_subject: "local.>",
            type: "service",
            invalid: false,
          },
        ],
      },
      OTHER: { exports: [{ subject: "svc.>", type: "service" }] },
    }),
  ]);
  const rows = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        "SELECT account, subject, local_subject, declared, inactive_servers, export_found FROM hx.account_imports ORDER BY account",
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(rows, [
    {
      account: "APP",
      subject: "svc.>",
      local_subject: "local.>",
      declared: true,
      inactive_servers: [],
      export_found: true,
    },
  ]);
  assert.deepEqual(await runCheck(fixture.catalog, accounts003, fixture.epochs[0]!), []);
  const exports = await fixture.catalog.withReader(async (con) =>
    (await con.runAndReadAll("SELECT account, subject, importers FROM hx.account_exports")).getRowObjectsJS(),
  );
  assert.deepEqual(exports, [{ account: "OTHER", subject: "svc.>", importers: 1 }]);
});

test("exports read alike from the server and the JWT; a JWT limit past 2^31−1 as a 2.9.10 server holds it", async () => {
  await using fixture = await catalogWith([
    withDetails({
      // The server lists a streamed service response as "Streamed" and leaves out a false
      // token_req; 2^32 + 5 wraps to 5 in the int32 a 2.9.10 server keeps the limit in.
      APP: { limits: { conn: 2 ** 32 + 5 } },
      OTHER: { exports: [{ subject: "svc.>", type: "service", response_type: "Streamed" }] },
    }),
  ]);
  const [exported] = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll("SELECT subject, token_req, response_type FROM hx.account_exports")
    ).getRowObjectsJS(),
  );
  assert.deepEqual(exported, { subject: "svc.>", token_req: false, response_type: "Stream" });
  const limits = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        "SELECT DISTINCT max_connections FROM hx.accounts WHERE account = 'APP' AND max_connections IS NOT NULL",
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(limits, [{ max_connections: 5n }]);
});

test("an account flagged expired is judged by its own detail's time, not by the older account list's", async () => {
  // n1 listed its accounts at 11:02:18.684 and sent APP's detail at 11:02:19, flagged
  // expired: APP's JWT expired at 11:02:19, in between. Judged by the list's time it would
  // not have expired yet, and the flag would read as a deletion.
  await using fixture = await catalogWith([
    withDetails({ APP: { exp: "2026-11-22T11:02:19Z", expired: true }, OTHER: {} }),
  ]);
  const states = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        "SELECT account, state FROM hx.account_states WHERE state IS NOT NULL ORDER BY account",
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(states, [
    { account: "APP", state: "expired" },
    { account: "OTHER", state: "live" },
  ]);
  const rows = await runCheck(
    fixture.catalog,
    CHECKS.find((c) => c.code === "accounts-008")!,
    fixture.epochs[0]!,
  );
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.jwt_expires]),
    [["APP", new Date("2026-11-22T11:02:19Z")]],
  );
});
