/**
 * user-001 against a real 2.9.10 server in operator mode: a user whose JWT is a bearer token
 * connects (no nonce signed), natsmon's own CONNZ request with `auth` carries its JWT, the
 * fold keeps only the bearer flag, and the check fires for that user; a normal user does not
 * make it fire, and once the bearer user disconnects it goes quiet.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";

const userCheck: Check = CHECKS.find((c) => c.code === "user-001")!;
const SCRAPED = SOURCES.filter((s) => ["varz", "connz", "accstatz"].includes(s.name));

async function fired(epochs: readonly FixtureEpoch[]) {
  await using fixture = await catalogWith(epochs);
  return await runCheck(fixture.catalog, userCheck, fixture.epochs.at(-1)!);
}

describe("a bearer-token user on a real 2.9.10 server in operator mode", () => {
  let server: OperatorServer;
  let sys: NatsConnection;
  let normal: NatsConnection;

  async function scrape(): Promise<FixtureEpoch> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    return { replies, marker: { servers_expected: [server.name] } };
  }

  before(async () => {
    server = await startOperatorServer();
    sys = await connect({ servers: server.url, authenticator: server.user("SYS", "scraper").authenticator });
    normal = await connect({
      servers: server.url,
      authenticator: server.user("APP", "worker").authenticator,
    });
  });

  after(async () => {
    await normal?.close();
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  test("user-001 fires for the connected bearer user only, and goes quiet when it leaves", async () => {
    assert.deepEqual(await fired([await scrape()]), [], "a normal user signs its nonce");
    const web = server.user("APP", "web", { bearer: true });
    const bearer = await connect({ servers: server.url, authenticator: web.authenticator });
    let rows: Record<string, unknown>[];
    try {
      rows = await fired([await scrape()]);
    } finally {
      await bearer.close();
    }
    assert.deepEqual(
      rows.map((r) => [r.entity_key, r.name_tag, r.account, r.connections, r.server]),
      [[web.publicKey, "web", server.appAccount, 1n, null]],
    );
    assert.match(String(rows[0]!.entity_name), /^web \(/);
    await waitFor(async () => (await fired([await scrape()])).length === 0, {
      message: "user-001 quiet once the bearer user disconnected",
    });
  });
});
