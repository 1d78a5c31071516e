/**
 * JetStream checks beyond their contract fixtures: jetstream-008 (Stream Quorum Lost) over
 * the states a replicated stream goes through when servers stop, as 2.9.10 reports them (lab
 * replies edited after what a real cluster showed: see jetstream-quorum-live.test.ts); the
 * edge cases of the delta checks; and the API in-flight figure jetstream-005 reads.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { labReplies } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck } from "./check-harness.ts";
import { editJsz, n2AloneWithoutLeaders, streamIn, withoutServers } from "./fixtures/jetstream.ts";

function check(code: string): Check {
  const found = CHECKS.find((c) => c.code === code);
  assert.ok(found, code);
  return found;
}

const quorumLost = check("jetstream-008");

/** The check's rows over the last of `epochs` (the catalog is closed only once they are read). */
async function checkRows(c: Check, epochs: ScrapeReply[][]): Promise<Record<string, unknown>[]> {
  await using fixture = await catalogWith(epochs);
  return await runCheck(fixture.catalog, c, fixture.epochs.at(-1)!);
}

/** The check's rows for the last of `epochs`, by entity name, with the columns that matter here. */
async function lost(epochs: ScrapeReply[][]): Promise<Record<string, unknown>> {
  const rows = await checkRows(quorumLost, epochs);
  return Object.fromEntries(
    rows.map((r): [string, unknown] => [
      String(r.entity_name),
      {
        server: r.server,
        leader: r.leader,
        replicas: r.replicas,
        quorum: r.quorum,
        replicas_offline: r.replicas_offline,
        replicas_online: r.replicas_online,
      },
    ]),
  );
}

/** Peer entries of a leader's view: `offline` lists the peers it reports offline. */
function peers(names: string[], offline: string[]) {
  return names.map((name) => ({
    name,
    current: !offline.includes(name),
    ...(offline.includes(name) ? { offline: true } : {}),
    active: 1_000_000,
  }));
}

describe("jetstream-008 on an R3 stream losing two of its three servers", () => {
  test("while the surviving leader still leads, its view of both peers offline fires it", async () => {
    // n2 leads ORDERS and KV_config; n1 and n3 are down. WORKQ's leader was n1, which n2
    // still names: no leader answered for it, and n2's own copy lists both peers offline.
    const alone = editJsz(
      "n2",
      (body) => {
        for (const name of ["ORDERS", "KV_config", "WORKQ"]) {
          streamIn(body, name).cluster.replicas = peers(["n1", "n3"], ["n1", "n3"]);
        }
      },
      withoutServers(["n1", "n3"]),
    );
    const rows = await lost([labReplies(), alone]);
    const fromLeader = {
      server: "n2",
      leader: "n2",
      replicas: 3,
      quorum: 2,
      replicas_offline: 2,
      replicas_online: ["n2"],
    };
    const fromReplicas = { ...fromLeader, leader: null };
    assert.deepEqual(rows, {
      "hub/APP/ORDERS": fromLeader,
      "hub/APP/KV_config": fromLeader,
      "hub/APP/WORKQ": fromReplicas,
    });
  });

  test("a surviving follower that still names the lost leader fires it from its own view of the peers", async () => {
    // n2 (ORDERS' leader) and n3 are down; n1 still names n2 as leader for a few seconds and
    // lists both peers offline.
    const follower = editJsz(
      "n1",
      (body) => (streamIn(body, "ORDERS").cluster.replicas = peers(["n2", "n3"], ["n2", "n3"])),
      withoutServers(["n2", "n3"]),
    );
    const rows = await lost([labReplies(), follower]);
    assert.deepEqual(rows["hub/APP/ORDERS"], {
      server: "n1",
      leader: null,
      replicas: 3,
      quorum: 2,
      replicas_offline: 2,
      replicas_online: ["n1"],
    });
  });

  test("replies missing from the epoch fire nothing while the replica that answered sees its peers up", async () => {
    // Only n2's JSZ reached natsmon; n1 and n3 answered VARZ and HEALTHZ. n2 names leaders
    // (n1 for WORKQ) and sees every peer online: a scrape gap, not a lost quorum.
    const gap = labReplies().filter((r) => r.source !== "jsz" || r.server === "n2");
    assert.deepEqual(await lost([labReplies(), gap]), {});
  });

  test("once the survivor has no leader at all, it still fires, naming the server that answered", async () => {
    const rows = await lost([labReplies(), n2AloneWithoutLeaders()]);
    for (const name of ["hub/APP/ORDERS", "hub/APP/WORKQ", "hub/APP/KV_config"]) {
      assert.deepEqual(
        rows[name],
        { server: "n2", leader: null, replicas: 3, quorum: 2, replicas_offline: 2, replicas_online: ["n2"] },
        name,
      );
    }
  });

  test("an election among two answering replicas while the third is down does not fire", async () => {
    // n3 down; n1 and n2 both answer for ORDERS, see n3 offline and name no leader yet.
    let replies = withoutServers(["n3"]);
    for (const [server, other] of [
      ["n1", "n2"],
      ["n2", "n1"],
    ] as const) {
      replies = editJsz(
        server,
        (body) => {
          const cluster = streamIn(body, "ORDERS").cluster;
          delete cluster.leader;
          cluster.replicas = peers([server, other, "n3"], ["n3"]);
        },
        replies,
      );
    }
    assert.deepEqual(await lost([labReplies(), replies]), {});
  });

  test("the finding is there only for the epochs quorum was lost in: it resolves when the servers return", async () => {
    await using fixture = await catalogWith([labReplies(), n2AloneWithoutLeaders(), labReplies()]);
    const [first, down, back] = fixture.epochs;
    const rows = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          "SELECT epoch, entity_name FROM checks.jetstream_008($1::TIMESTAMPTZ, $2::TIMESTAMPTZ) ORDER BY ALL",
          [first!, back!],
        )
      ).getRowObjectsJS(),
    );
    assert.deepEqual(new Set(rows.map((r) => (r.epoch as Date).toISOString())), new Set([down]));
    assert.deepEqual(await runCheck(fixture.catalog, quorumLost, back!), []);
  });

  test("an R2 stream with one replica offline has lost quorum too (raft needs both)", async () => {
    const r2 = editJsz("n2", (body) => {
      const orders = streamIn(body, "ORDERS");
      orders.config.num_replicas = 2;
      orders.cluster.replicas = peers(["n3"], ["n3"]);
    });
    const rows = await lost([r2]);
    assert.deepEqual(rows["hub/APP/ORDERS"], {
      server: "n2",
      leader: "n2",
      replicas: 2,
      quorum: 2,
      replicas_offline: 1,
      replicas_online: ["n2"],
    });
  });

  test("a stream first seen without a leader is not judged: its replica count is unknown", async () => {
    assert.deepEqual(await lost([n2AloneWithoutLeaders()]), {});
  });
});

describe("the JetStream API delta checks compare a server with its own previous epoch", () => {
  const rate = check("jetstream-004");
  const errors = check("jetstream-009");
  const churn = check("jetstream-006");

  function api(server: string, total: number, errorCount: number, replies = labReplies()): ScrapeReply[] {
    return editJsz(
      server,
      (body) => ((body.data.api.total = total), (body.data.api.errors = errorCount)),
      replies,
    );
  }

  test("a counter that went down (a restart) gives no rate and no error share", async () => {
    const before = api("n3", 100_000, 5000);
    const restarted = api("n3", 10, 9);
    assert.deepEqual(await checkRows(rate, [before, restarted]), []);
    assert.deepEqual(await checkRows(errors, [before, restarted]), []);
  });

  test("a server missing from the previous epoch has nothing to compare with", async () => {
    const missing = withoutServers(["n3"]);
    assert.deepEqual(await checkRows(rate, [missing, api("n3", 1_000_000, 900_000)]), []);
    assert.deepEqual(await checkRows(errors, [missing, api("n3", 1_000_000, 900_000)]), []);
    const consumers = editJsz("n3", (body) => (body.data.consumers = 100_000));
    assert.deepEqual(await checkRows(churn, [missing, consumers]), []);
  });

  test("the error share is not judged below the minimum number of requests", async () => {
    const rows = await checkRows(errors, [api("n3", 1000, 0), api("n3", 1099, 90)]);
    assert.deepEqual(rows, []);
    const [row] = await checkRows(errors, [api("n3", 1000, 0), api("n3", 1100, 90)]);
    assert.deepEqual(
      { api_requests: row?.api_requests, api_errors: row?.api_errors, error_percent: row?.error_percent },
      { api_requests: 100n, api_errors: 90n, error_percent: 90 },
    );
  });

  test("the rate is the request delta over the seconds between the epochs", async () => {
    const [row] = await checkRows(rate, [api("n1", 1000, 0), api("n1", 2000, 0)]);
    assert.deepEqual(
      {
        api_requests: row?.api_requests,
        interval_seconds: row?.interval_seconds,
        requests_per_second: row?.requests_per_second,
      },
      { api_requests: 1000n, interval_seconds: 10, requests_per_second: 100 },
    );
  });

  test("consumers going away count as much as consumers appearing", async () => {
    const many = editJsz("n1", (body) => (body.data.consumers = 9000));
    const few = editJsz("n1", (body) => (body.data.consumers = 3000));
    const [row] = await checkRows(churn, [many, few]);
    assert.deepEqual(
      { entity_name: row?.entity_name, delta: row?.delta },
      { entity_name: "n1", delta: -6000n },
    );
  });
});

describe("JetStream API requests in flight (jetstream-005)", () => {
  test("are 0 where 2.9.10 leaves api.inflight out, and the reported figure where it is there", async () => {
    await using fixture = await catalogWith([editJsz("n1", (body) => (body.data.api.inflight = 1001))]);
    const rows = await fixture.catalog.withReader(async (con) =>
      (
        await con.runAndReadAll(
          "SELECT server, js_api_inflight FROM hx.servers WHERE jetstream ORDER BY server",
        )
      ).getRowObjectsJS(),
    );
    assert.deepEqual(
      rows.map((r) => [r.server, r.js_api_inflight]),
      [
        ["l1", 0n],
        ["n1", 1001n],
        ["n2", 0n],
        ["n3", 0n],
        ["w1", 0n],
        ["w2", 0n],
      ],
    );
    const [row] = await runCheck(fixture.catalog, check("jetstream-005"), fixture.epochs[0]!);
    assert.deepEqual([row?.entity_name, row?.api_inflight], ["n1", 1001n]);
  });
});
