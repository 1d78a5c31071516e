/**
 * accounts-003 against imports a real nats-server 2.9.10 (operator mode) accepts in a form
 * the JWT does not spell as the server lists it, and against an import it refuses for a
 * reason other than a token: imports mapped with `$1` references (the server stores
 * wildcards) are active and do not fire; a second import of the same public export is
 * refused, and its cause is not a missing activation token.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { createAccount } from "@nats-io/nkeys";
import { CHECKS } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accountz", "accstatz", "jsz"].includes(s.name));
const accounts003 = CHECKS.find((c) => c.code === "accounts-003")!;

const exporter = createAccount();
const mapped = createAccount();
const twice = createAccount();
let server: OperatorServer;
let sys: NatsConnection;
const users: NatsConnection[] = [];

before(async () => {
  server = await startOperatorServer("accjwtimp", {
    accounts: {
      EXP: {
        key: exporter,
        exports: [
          { subject: "orders.*", type: "stream" },
          { subject: "svc.*", type: "service" },
          { subject: "pub.>", type: "stream" },
        ],
      },
      MAPPED: {
        key: mapped,
        imports: [
          { subject: "orders.*", account: exporter.getPublicKey(), type: "stream", local_subject: "in.$1" },
          { subject: "svc.*", account: exporter.getPublicKey(), type: "service", local_subject: "ask.$1" },
        ],
      },
      TWICE: {
        key: twice,
        imports: [
          { subject: "pub.>", account: exporter.getPublicKey(), type: "stream", local_subject: "one.>" },
          { subject: "pub.>", account: exporter.getPublicKey(), type: "stream", local_subject: "two.>" },
        ],
      },
    },
  });
  sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
  for (const account of ["EXP", "MAPPED", "TWICE"]) {
    users.push(
      await connect({ servers: server.url, authenticator: server.user(account, "u").authenticator }),
    );
  }
});

after(async () => {
  for (const nc of users) await nc.close();
  await sys?.close();
  await server?.[Symbol.asyncDispose]();
});

test("imports mapped with $1 work and are not reported; a refused duplicate is not blamed on a token", async () => {
  const [exp, imp] = users;
  // The mapped imports carry messages and requests.
  const sub = imp!.subscribe("in.eu", { max: 1 });
  const svc = exp!.subscribe("svc.*", {
    callback: (_err, m) => {
      m.respond("pong");
    },
  });
  await imp!.flush();
  await exp!.flush();
  exp!.publish("orders.eu", "x");
  for await (const m of sub) assert.equal(m.subject, "in.eu");
  assert.equal((await imp!.request("ask.x", "ping", { timeout: 5_000 })).string(), "pong");
  svc.unsubscribe();

  const { replies } = await scrapeOneEpoch(sys, SCRAPED);
  await using fixture = await catalogWith([{ replies, marker: { servers_expected: [server.name] } }]);
  const imports = await fixture.catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT subject, local_subject, type, declared, inactive_servers FROM hx.account_imports
          WHERE account = '${mapped.getPublicKey()}' AND subject NOT LIKE '$%' ORDER BY type`,
      )
    ).getRowObjectsJS(),
  );
  assert.deepEqual(imports, [
    { subject: "svc.*", local_subject: "ask.*", type: "service", declared: true, inactive_servers: [] },
    { subject: "orders.*", local_subject: "in.*", type: "stream", declared: true, inactive_servers: [] },
  ]);
  const rows = await runCheck(fixture.catalog, accounts003, fixture.epochs[0]!);
  assert.deepEqual(
    rows.map((r) => [r.entity_name, r.subject, r.cause, r.servers]),
    [["TWICE", "pub.>", "refused by the server", [server.name]]],
  );
});
