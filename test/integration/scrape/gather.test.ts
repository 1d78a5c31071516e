import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { gather } from "../../../src/scrape/index.ts";
import { startTestCluster, type TestCluster } from "../../harness/start-nats-cluster.ts";
import { SYS_USER } from "../../harness/start-nats-server.ts";

const WINDOW = { quietMs: 300, timeoutMs: 5000 };

describe("gathering a $SYS request from a real 3-node cluster", () => {
  let cluster: TestCluster;
  let sys: NatsConnection;
  before(async () => {
    cluster = await startTestCluster();
    // Connected to n1 only: the test stops n3 and must not be talking through it.
    sys = await connect({ servers: cluster.nodes[0]!.url, user: SYS_USER.user, pass: SYS_USER.password });
  });
  after(async () => {
    await sys?.close();
    await cluster?.[Symbol.asyncDispose]();
  });

  test("collects one gzip reply per server, named by server name", async () => {
    const result = await gather(sys, "$SYS.REQ.SERVER.PING.VARZ", {}, WINDOW);
    assert.equal(result.kind, "replies");
    if (result.kind !== "replies") return;
    assert.deepEqual(result.replies.map((r) => r.server).sort(), ["n1", "n2", "n3"]);
    assert.ok(result.replies.every((r) => r.encoding === "gzip"));
  });

  test("marks a request the servers are too old for as unsupported, not as an error (IDZ needs 2.10)", async () => {
    const result = await gather(sys, "$SYS.REQ.SERVER.PING.IDZ", {}, WINDOW);
    assert.equal(result.kind, "unsupported");
  });

  // The process is busy (a fold, a large parse on the same event loop) right after the first
  // reply, while the other servers' replies come in: n2 and n3 are frozen until the stall
  // begins, so theirs cannot be read before it. Each case fails if the expired timer ends the
  // gather before the waiting replies are read.
  const stalls = [
    { what: "longer than the quiet window", window: { quietMs: 200, timeoutMs: 30_000 }, stallMs: 1_500 },
    { what: "a little past the quiet window", window: { quietMs: 2_000, timeoutMs: 30_000 }, stallMs: 2_500 },
    { what: "past the overall timeout", window: { quietMs: 20_000, timeoutMs: 300 }, stallMs: 1_500 },
  ];
  for (const { what, window, stallMs } of stalls) {
    test(`keeps the replies that came while the event loop was held ${what}`, async () => {
      const result = await gatherStalled(window, stallMs);
      assert.equal(result.kind, "replies");
      if (result.kind === "replies")
        assert.deepEqual(result.replies.map((r) => r.server).sort(), ["n1", "n2", "n3"]);
    });
  }

  async function gatherStalled(window: typeof WINDOW, stallMs: number) {
    const others = cluster.nodes.slice(1);
    for (const node of others) node.pause();
    let stalled = false;
    try {
      return await gather(sys, "$SYS.REQ.SERVER.PING.VARZ", {}, window, (parsed) => {
        if (!stalled) {
          stalled = true;
          // After this reply's handling (the quiet window is armed by then).
          setImmediate(() => {
            for (const node of others) node.resume();
            const until = performance.now() + stallMs;
            while (performance.now() < until);
          });
        }
        return (parsed as { server?: { name?: string } }).server?.name;
      });
    } finally {
      for (const node of others) node.resume();
    }
  }

  test("a stopped server is simply absent from the replies", async () => {
    await cluster.nodes[2]!.stop();
    const result = await gather(sys, "$SYS.REQ.SERVER.PING.HEALTHZ", {}, WINDOW);
    assert.equal(result.kind, "replies");
    if (result.kind === "replies") assert.deepEqual(result.replies.map((r) => r.server).sort(), ["n1", "n2"]);
    await cluster.nodes[2]!.start();
  });
});
