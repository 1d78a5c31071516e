/**
 * JSZ paged by account against a real nats-server 2.9.10: more JetStream accounts than one
 * page, scraped and folded. 2.9 sends the offset-0 page in no order and sorts only later
 * pages (nats-monitoring.md §0.11), which the paging must make up for.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { groupReplies, repliesOf } from "../../../src/catalog/replies.ts";
import { fetchRemainingPages, gather, SOURCES, type Source } from "../../../src/scrape/index.ts";
import {
  startTestServer,
  SYS_USER,
  testAccountUser,
  type TestServer,
} from "../../harness/start-nats-server.ts";
import { q, tempCatalog } from "./lab-epoch.ts";
import { scrapeOneEpoch } from "./live-scrape.ts";

/** Two accounts per page: the 9 JetStream accounts (APP and 8 more) span several pages. */
const PAGE = 2;
const JSZ = SOURCES.find((s) => s.name === "jsz")!;
const JSZ_PAGED: Source = {
  ...JSZ,
  body: { ...JSZ.body, limit: PAGE },
  paged: { ...JSZ.paged!, limit: PAGE },
};
const SOURCES_PAGED: readonly Source[] = SOURCES.map((s) => (s.name === "jsz" ? JSZ_PAGED : s));
const WINDOW = { quietMs: 300, timeoutMs: 5000 };

/** Accounts with JetStream and 1–3 streams each (the first stream with a consumer); NOJS has none. */
const ACCOUNTS = ["ACC0", "ACC1", "ACC2", "ACC3", "ACC4", "ACC5", "ACC6", "ACC7"];
const streamsOf = (account: string, i: number) =>
  Array.from({ length: (i % 3) + 1 }, (_, k) => `${account.toLowerCase()}_s${k}`);

describe("JSZ paged by account, from a real nats-server with 9 JetStream accounts", () => {
  let server: TestServer;
  let sys: NatsConnection;
  const expected: { account: string; stream: string }[] = [];
  before(async () => {
    server = await startTestServer("jp1", {
      extraAccounts: [...ACCOUNTS.map((name) => ({ name, jetstream: true })), { name: "NOJS" }],
    });
    for (const [i, account] of ACCOUNTS.entries()) {
      const u = testAccountUser({ name: account });
      const nc = await connect({ servers: server.url, user: u.user, pass: u.password });
      const jsm = await jetstreamManager(nc);
      for (const stream of streamsOf(account, i)) {
        await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
        expected.push({ account, stream });
      }
      await jsm.consumers.add(streamsOf(account, i)[0]!, { durable_name: "c1" });
      await nc.close();
    }
    sys = await connect({ servers: server.url, user: SYS_USER.user, pass: SYS_USER.password });
  });
  after(async () => {
    await sys?.close();
    await server?.[Symbol.asyncDispose]();
  });

  const accountsOf = (pages: readonly { envelope: unknown }[]) =>
    pages.flatMap((p) =>
      ((p.envelope as { data?: { account_details?: { id: string }[] } }).data?.account_details ?? []).map(
        (a) => a.id,
      ),
    );

  test("a first page without the first account in name order: sorted pages from offset 1, then that account by name", async () => {
    // A sorted page from offset 3 stands in for a shuffled first page that missed ACC0.
    const result = await gather(sys, JSZ.subject, { ...JSZ_PAGED.body, offset: 3 }, WINDOW);
    assert.equal(result.kind, "replies");
    if (result.kind !== "replies") return;
    const first = result.replies[0]!;
    assert.deepEqual(accountsOf([first]), ["ACC3", "ACC4"]);
    const more = await fetchRemainingPages(sys, JSZ_PAGED, first, WINDOW);
    assert.equal(more.error, undefined);
    // Offsets 1, 3, 5, 7 (sorted: ACC0…ACC7, APP), then ACC0 asked for by name.
    assert.deepEqual(accountsOf(more.pages), [
      "ACC1",
      "ACC2",
      "ACC3",
      "ACC4",
      "ACC5",
      "ACC6",
      "ACC7",
      "APP",
      "ACC0",
    ]);
  });

  test("a first page holding every account needs no further page", async () => {
    const result = await gather(sys, JSZ.subject, JSZ.body, WINDOW);
    assert.equal(result.kind, "replies");
    if (result.kind !== "replies") return;
    assert.equal(accountsOf(result.replies).length, 9);
    assert.deepEqual(await fetchRemainingPages(sys, JSZ, result.replies[0]!, WINDOW), { pages: [] });
  });

  test("the scraper writes each page as a part, and every stream of every account is folded once", async () => {
    const { marker, replies } = await scrapeOneEpoch(sys, SOURCES_PAGED);
    const pages = marker.parts.filter((p) => p.source === "jsz").map((p) => p.page);
    // The shuffled first page, offsets 1, 3, 5, 7, and ACC0 unless the first page held it.
    assert.ok(pages.length === 5 || pages.length === 6, `jsz pages ${pages.join(",")}`);
    assert.deepEqual(
      pages,
      pages.map((_, i) => i + 1),
    );
    assert.deepEqual(
      marker.errors.filter((e) => e.source === "jsz"),
      [],
    );
    const merged = repliesOf(groupReplies(replies), "jsz").get("jp1")!;
    assert.equal(merged.data.accounts, 9);
    assert.equal(merged.data.streams, expected.length);

    await using t = await tempCatalog();
    const result = await foldEpoch(t.catalog, { markerSeq: 1, marker, replies });
    assert.equal(result.status, "folded");
    const byName = (a: { account: string; stream: string }, b: typeof a) =>
      a.account.localeCompare(b.account) || a.stream.localeCompare(b.stream);
    assert.deepEqual(
      await q(t.catalog, "SELECT account, stream FROM hx.streams ORDER BY account, stream"),
      [...expected].sort(byName),
    );
    assert.deepEqual(await q(t.catalog, "SELECT count(*) AS n FROM hx.consumers"), [{ n: ACCOUNTS.length }]);
    const [epoch] = await q(t.catalog, "SELECT errors FROM hx.epochs");
    assert.deepEqual(
      (epoch?.errors as string[]).filter((e) => /jsz|stream|consumer/.test(e)),
      [],
    );
  });
});
