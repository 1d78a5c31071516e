/**
 * cluster-005 on a real 3-node nats-server 2.9.10 cluster, from what the fold stores of real
 * scrapes: with every node up the route mesh is full; with n3 stopped, n1 and n2 each miss
 * their route to it while the epoch still expects it; with n3 back, the mesh is full again.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CLUSTER_CHECKS } from "../../../src/checks/cluster/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type ClusterNode, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { catalogWith, runCheck } from "./check-harness.ts";

const SERVERS = ["n1", "n2", "n3"];
const SCRAPED = SOURCES.filter((s) => ["varz", "routez"].includes(s.name));
const cluster005 = CLUSTER_CHECKS.find((c) => c.code === "cluster-005")!;

describe("cluster-005 on a real 3-node 2.9.10 cluster", () => {
  let cluster: TestCluster;
  let sys: NatsConnection;
  let n3: ClusterNode;

  before(async () => {
    cluster = await startTestCluster({ size: 3 });
    n3 = cluster.nodes.find((n) => n.name === "n3")!;
    // The monitor connects to n1 and n2, so it keeps its connection while n3 is down.
    const others = cluster.nodes.filter((n) => n !== n3).map((n) => n.url);
    sys = await connect({ servers: others, user: SYS_USER.user, pass: SYS_USER.password });
  });

  after(async () => {
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  /** The epoch scraped with every node up: the catalog learns there n3's cluster. */
  let allUp: ScrapeReply[] = [];

  /**
   * cluster-005's rows for a freshly scraped epoch that expects n1..n3, folded after the
   * all-up one (a server the catalog never saw has no cluster to be a member of).
   */
  async function cluster005Now(): Promise<{ rows: Record<string, unknown>[]; answered: Set<string> }> {
    const { replies } = await scrapeOneEpoch(sys, SCRAPED);
    if (allUp.length === 0) allUp = replies;
    await using fixture = await catalogWith([
      { replies: allUp, marker: { servers_expected: SERVERS } },
      { replies, marker: { servers_expected: SERVERS } },
    ]);
    const rows = await runCheck(fixture.catalog, cluster005, fixture.epochs.at(-1)!);
    return { rows, answered: new Set(replies.filter((r) => r.source === "varz").map((r) => r.server)) };
  }

  /**
   * An epoch in which a server's VARZ came too late for the scrape shows no finding without
   * showing the mesh: only the servers that answered are placed in the cluster.
   */
  const allAnswered = (answered: Set<string>) => SERVERS.every((s) => answered.has(s));

  test("a full mesh of routes fires nothing", async () => {
    await waitFor(
      async () => {
        allUp = []; // the all-up epoch is the one that shows the full mesh
        // The catalog must also learn here that n3 belongs to the cluster, or nothing fires
        // once it stops (the fresh-clone CI once saw that).
        const { rows, answered } = await cluster005Now();
        return rows.length === 0 && allAnswered(answered);
      },
      {
        timeoutMs: 30_000,
        message: "a full route mesh",
      },
    );
  });

  test("with n3 stopped, n1 and n2 each have one route of the two their cluster needs", async () => {
    await n3.stop();
    const rows = await waitFor(
      async () => {
        const { rows } = await cluster005Now();
        return rows.length === 2 && rows;
      },
      { timeoutMs: 60_000, message: "cluster-005 for n1 and n2" },
    );
    assert.deepEqual(
      rows
        .map((r) => [r.entity_name, r.server, r.cluster, r.routed_servers, r.expected_routes, r.members])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ["n1", "n1", "c1", 1, 2, SERVERS],
        ["n2", "n2", "c1", 1, 2, SERVERS],
      ],
    );
  });

  test("with n3 back, the mesh is full again and the check no longer fires", async () => {
    await n3.start();
    await waitFor(
      async () => {
        const { rows, answered } = await cluster005Now();
        return rows.length === 0 && allAnswered(answered);
      },
      {
        timeoutMs: 60_000,
        message: "cluster-005 to clear once n3 is back",
      },
    );
  });
});
