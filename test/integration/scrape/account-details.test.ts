/**
 * ACCOUNTZ's accounts in detail, against a real 3-node cluster (2.9.10): each account is asked
 * of one server that lists it, the same one scrape after scrape, and of the next one when the
 * first does not answer; a server that lets a request time out is not asked again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { fetchDetails, gather, SOURCES, type GatheredReply } from "../../../src/scrape/index.ts";
import { startTestCluster } from "../../harness/start-nats-cluster.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";

const accountz = SOURCES.find((s) => s.name === "accountz")!;
const WINDOW = { quietMs: 300, timeoutMs: 5_000 };

type Detail = { data: { account_detail: { account_name: string } } };

/** Account → server whose detail of it came. */
function answered(pages: Map<string, GatheredReply[]>): Map<string, string> {
  const by = new Map<string, string>();
  for (const [server, replies] of pages) {
    for (const reply of replies) {
      const name = (reply.envelope as unknown as Detail).data.account_detail.account_name;
      assert.ok(!by.has(name), `${name} asked twice`);
      by.set(name, server);
    }
  }
  return by;
}

test("each account is detailed once, by the same server each scrape, and by another when that one is silent", async () => {
  await using cluster = await startTestCluster({ size: 3 });
  const sys = await connect({ servers: cluster.nodes[0]!.url, user: SYS_USER.user, pass: SYS_USER.password });
  try {
    const lists = await gather(sys, accountz.subject, accountz.body, WINDOW);
    assert.equal(lists.kind, "replies");
    const replies = lists.kind === "replies" ? lists.replies : [];
    assert.equal(replies.length, 3);
    const listed = new Set(
      replies.flatMap((r) => (r.envelope as unknown as { data: { accounts: string[] } }).data.accounts),
    );
    assert.ok(listed.has("APP") && listed.has("SYS"));

    const first = await fetchDetails(sys, accountz, replies, WINDOW);
    assert.deepEqual(first.errors, []);
    const servers = answered(first.pages);
    assert.deepEqual([...servers.keys()].sort(), [...listed].sort());
    const again = await fetchDetails(sys, accountz, replies, WINDOW);
    assert.deepEqual(answered(again.pages), servers, "the same server for each account");

    // A server that lists every account, and one of its own, and answers nothing.
    const ghost: GatheredReply = {
      ...replies[0]!,
      server: "ghost",
      envelope: {
        server: { name: "ghost", id: "NGHOSTSERVER" },
        data: { accounts: [...listed, "ONLY_GHOST"] },
      } as GatheredReply["envelope"],
    };
    const withGhost = await fetchDetails(sys, accountz, [...replies, ghost], WINDOW);
    const fallback = answered(withGhost.pages);
    assert.deepEqual(
      [...fallback.keys()].sort(),
      [...listed].sort(),
      "every real account from a real server",
    );
    assert.ok(![...fallback.values()].includes("ghost"));
    assert.deepEqual(withGhost.errors, [
      "accountz: the details of 1 of the accounts did not arrive (ONLY_GHOST)",
    ]);
  } finally {
    await sys.close();
  }
});

test("a server that stalls after its list is asked a handful of times, not once per account", async () => {
  await using cluster = await startTestCluster({ size: 2 });
  const sys = await connect({ servers: cluster.nodes[0]!.url, user: SYS_USER.user, pass: SYS_USER.password });
  // A responder that never answers stands for a server frozen after it sent its list.
  let asked = 0;
  const frozen = sys.subscribe("$SYS.REQ.SERVER.NFROZEN.ACCOUNTZ", {
    callback: () => {
      asked++;
    },
  });
  try {
    await sys.flush();
    const lists = await gather(sys, accountz.subject, accountz.body, WINDOW);
    const real = lists.kind === "replies" ? lists.replies[0]! : undefined;
    assert.ok(real);
    // 256 accounts the real server does not have (it answers each with an error) and the
    // frozen one lists too.
    const accounts = Array.from({ length: 256 }, (_, i) => `GONE${i}`);
    const list = (name: string, id: string): GatheredReply => ({
      ...real,
      server: name,
      envelope: { server: { name, id }, data: { accounts } } as GatheredReply["envelope"],
    });
    const result = await fetchDetails(
      sys,
      accountz,
      [list(real.server, real.envelope.server!.id!), list("frozen", "NFROZEN")],
      {
        timeoutMs: 500,
      },
    );
    assert.ok(asked <= accountz.details!.concurrency, `the frozen server was asked ${asked} times`);
    assert.deepEqual(result.errors, [
      "accountz: no detail came from frozen within scraper.timeout; not asked again",
    ]);
    // Every account's refusal by the real server is kept, for the catalog to record.
    const kept = [...result.pages.values()].flat();
    assert.equal(kept.length, 256);
    assert.ok(kept.every((r) => r.server === real.server && r.envelope.error !== undefined));
  } finally {
    frozen.unsubscribe();
    await sys.close();
  }
});
