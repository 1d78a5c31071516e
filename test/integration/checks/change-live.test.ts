/**
 * change-001 on a real nats-server 2.9.10, from what the fold stores of real scrapes: a
 * SIGHUP makes the server reload its configuration, which the check reports between the
 * epochs before and after; the epoch after that, with no new reload, reports nothing.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHANGE_CHECKS } from "../../../src/checks/change/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { SYS_USER, startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SCRAPED = SOURCES.filter((s) => s.name === "varz");
const change001 = CHANGE_CHECKS.find((c) => c.code === "change-001")!;

describe("change-001 on a real 2.9.10 server reloaded with SIGHUP", () => {
  let server: TestServer;
  let sys: NatsConnection;

  before(async () => {
    server = await startTestServer("s1");
    sys = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
  });

  after(async () => {
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  const scrape = async () => (await scrapeOneEpoch(sys, SCRAPED)).replies;
  const loadTime = (replies: ScrapeReply[]) =>
    (replies.find((r) => r.source === "varz")?.body as { data: { config_load_time: string } }).data
      .config_load_time;

  async function change001Over(epochs: ScrapeReply[][]): Promise<Record<string, unknown>[]> {
    await using fixture = await catalogWith(
      epochs.map((replies) => ({ replies, marker: { servers_expected: ["s1"] } })),
    );
    return await runCheck(fixture.catalog, change001, fixture.epochs.at(-1)!);
  }

  test("a reload between two epochs is reported, and the next epoch without one is not", async () => {
    const before = await scrape();
    assert.deepEqual(await change001Over([before, await scrape()]), [], "no reload yet");

    server.process.kill("SIGHUP");
    const reloaded = await waitFor(
      async () => {
        const now = await scrape();
        return loadTime(now) !== loadTime(before) && now;
      },
      { timeoutMs: 30_000, message: "config_load_time to move after SIGHUP" },
    );
    const rows = await change001Over([before, reloaded]);
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.server, r.severity]),
      [["s1", "s1", "info"]],
    );
    assert.ok(Number(new Date(rows[0]!.config_load_time as string)) > Number(new Date(loadTime(before))));

    assert.deepEqual(await change001Over([before, reloaded, await scrape()]), [], "no second reload");
  });
});
