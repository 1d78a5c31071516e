/**
 * opt-sys checks beyond their contract fixtures, over lab epochs edited into what real
 * systems send: a leader that answered every request but JSZ (opt-sys-009), a consumer
 * sequence that steps back or restarts (opt-sys-002), a server that misses epochs
 * (opt-sys-012), a consumer with a backoff (opt-sys-024), a server too old to report
 * allow_direct (opt-sys-016), a stream created again (opt-sys-019) and an account using
 * JetStream in two domains (opt-sys-008).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS, type Check } from "../../../src/checks/index.ts";
import { editReply, labReplies, rows as sqlRows, sourceReplies, type LabBody } from "../catalog/lab-epoch.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";
import { editJsz, streamIn } from "./fixtures/jetstream.ts";
import { atVersion, editStream } from "./fixtures/stream-edits.ts";

type Json = Record<string, unknown>;
type Row = Record<string, unknown>;

function check(code: string): Check {
  const found = CHECKS.find((c) => c.code === code);
  assert.ok(found, code);
  return found;
}

/** The check's rows over the window from the first of `epochs` to the last. */
async function run(code: string, epochs: readonly FixtureEpoch[], params: Record<string, number> = {}) {
  await using f = await catalogWith(epochs);
  return await runCheck(f.catalog, check(code), f.epochs.at(-1)!, params, f.epochs[0]);
}

const names = (rows: Row[]) => rows.map((r) => r.entity_name);

describe("opt-sys-009 when a leader answered other requests but not JSZ", () => {
  const ORDERS_GROUP = "S-R3F-orders";
  const PROC_GROUP = "C-R3F-proc";

  /** 2.10.26, ORDERS and its consumer proc (led by n1) named by their raft groups in every JSZ reply. */
  function raftNamed(replies: ScrapeReply[]): ScrapeReply[] {
    const named = editStream(
      "ORDERS",
      (detail) => {
        Object.assign(detail, { stream_raft_group: ORDERS_GROUP });
        for (const c of (detail as unknown as { consumer_detail?: Json[] }).consumer_detail ?? [])
          if (c.name === "proc") c.cluster = { ...(c.cluster as Json), raft_group: PROC_GROUP };
      },
      replies,
    );
    return atVersion("2.10.26", named);
  }
  const withoutJszOf = (server: string) =>
    labReplies().filter((r) => !(r.server === server && r.source === "jsz"));

  test("the stream group whose leader (n2) sent no JSZ is not leaderless: its followers name n2", async () => {
    const rows = await run("opt-sys-009", [raftNamed(labReplies()), raftNamed(withoutJszOf("n2"))]);
    assert.deepEqual(names(rows), []);
  });

  test("neither the meta group nor the consumer group led by n1 is leaderless when n1 sent no JSZ", async () => {
    const rows = await run("opt-sys-009", [raftNamed(labReplies()), raftNamed(withoutJszOf("n1"))]);
    assert.deepEqual(names(rows), []);
  });

  test("a named leader whose own JSZ lists the group without leading it is stale: the group fires", async () => {
    // n2 still names n1 as proc's leader, but n1's JSZ lists proc and names no leader.
    const stale = editJsz("n1", (body) => {
      const proc = (streamIn(body, "ORDERS").consumer_detail as Json[]).find((c) => c.name === "proc")!;
      delete (proc.cluster as Json).leader;
    });
    const rows = await run("opt-sys-009", [raftNamed(labReplies()), raftNamed(stale)]);
    assert.deepEqual(names(rows), [PROC_GROUP]);
  });
});

describe("opt-sys-002 over a consumer sequence that steps back", () => {
  /** n1 (proc's leader) reports proc at consumer sequence `seq` with `redelivered` awaiting ack. */
  function proc(seq: number, redelivered: number, created?: string): ScrapeReply[] {
    return editJsz("n1", (body) => {
      const c = (streamIn(body, "ORDERS").consumer_detail as (Json & { delivered: Json })[]).find(
        (x) => x.name === "proc",
      )!;
      c.delivered.consumer_seq = seq;
      c.num_redelivered = redelivered;
      if (created) c.created = created;
    });
  }
  const shown = (rows: Row[]) => rows.map((r) => [r.entity_name, r.delivered_in_window]);

  test("100 deliveries an epoch with 50 awaiting redelivery fires", async () => {
    const rows = await run("opt-sys-002", [
      proc(100_000, 50),
      proc(100_100, 50),
      proc(100_200, 50),
      proc(100_300, 50),
    ]);
    assert.deepEqual(shown(rows), [["hub/APP/ORDERS/proc", 300n]]);
  });

  test("a step back of 5 (new consumer leader) counts as no delivery, not as the whole sequence", async () => {
    const rows = await run("opt-sys-002", [
      proc(100_000, 50),
      proc(100_100, 50),
      proc(100_095, 50),
      proc(100_195, 50),
    ]);
    assert.deepEqual(shown(rows), [["hub/APP/ORDERS/proc", 200n]]);
  });

  test("a consumer created again counts its new sequence", async () => {
    const again = "2026-01-01T00:00:15Z";
    const rows = await run(
      "opt-sys-002",
      [proc(100_000, 50), proc(100_100, 50), proc(60, 50, again), proc(160, 50, again)],
      { p_redelivery_percent: 0 },
    );
    assert.deepEqual(shown(rows), [["hub/APP/ORDERS/proc", 260n]]);
  });
});

describe("opt-sys-012 when a server misses epochs", () => {
  /** Lab + SUBSZ with n3's inserts moved by `delta`, or n3's SUBSZ missing when undefined. */
  function subszN3(delta: number | undefined): ScrapeReply[] {
    const subsz = editReply(
      "subsz",
      "n3",
      (body) => {
        if (delta === undefined) return undefined;
        const d = body.data as Json;
        d.num_inserts = Number(d.num_inserts) + delta;
        return body;
      },
      sourceReplies("subsz"),
    );
    return [...labReplies(), ...subsz];
  }
  /** `perEpoch` inserts an epoch on n3 over five epochs, n3 answering only the first and last. */
  const gap = (perEpoch: number) =>
    [0, 1, 2, 3, 4].map((i) => subszN3(i === 0 || i === 4 ? i * perEpoch : undefined));
  const shown = (rows: Row[]) =>
    rows.map((r) => [r.entity_name, r.churn_per_epoch, r.peak_churn, r.intervals]);

  test("5000 inserts an epoch across a 3-epoch gap are 5000 an epoch, under the threshold", async () => {
    assert.deepEqual(
      await run(
        "opt-sys-012",
        [0, 1, 2, 3, 4].map((i) => subszN3(i * 5000)),
      ),
      [],
    );
    assert.deepEqual(await run("opt-sys-012", gap(5000)), []);
  });

  test("12000 inserts an epoch across the gap fire at 12000 an epoch over 4 intervals", async () => {
    assert.deepEqual(shown(await run("opt-sys-012", gap(12_000))), [["n3", 12_000, 12_000n, 4n]]);
  });
});

describe("opt-sys-024 on a consumer with a backoff", () => {
  /** WORKQ discards new; its consumer workers has `config` set (nats-server reports ack_wait = backoff[0]). */
  function workers(config: Json): ScrapeReply[] {
    return editJsz("n1", (body) => {
      const s = streamIn(body, "WORKQ");
      s.config.discard = "new";
      const c = (s.consumer_detail as (Json & { config: Json })[]).find((x) => x.name === "workers")!;
      Object.assign(c.config, config);
    });
  }
  const shown = (rows: Row[]) => rows.map((r) => [r.entity_name, r.ack_wait_secs, r.max_deliver]);

  test("backoff 5s, 30s, 2m, 10m is judged by its longest step, not by the 5 s ack wait", async () => {
    const backoff = [5e9, 30e9, 120e9, 600e9];
    assert.deepEqual(await run("opt-sys-024", [workers({ ack_wait: 5e9, backoff, max_deliver: 20 })]), []);
  });

  test("backoff 1s, 5s, 10s waits at most 10 s: it fires", async () => {
    const rows = await run("opt-sys-024", [
      workers({ ack_wait: 1e9, backoff: [1e9, 5e9, 10e9], max_deliver: 20 }),
    ]);
    assert.deepEqual(shown(rows), [["hub/APP/WORKQ/workers", 10, 20n]]);
  });
});

describe("opt-sys-016 on servers before 2.9, which send no allow_direct", () => {
  /** The lab on 2.8.4: no stream config carries allow_direct. */
  function before29(): ScrapeReply[] {
    return atVersion("2.8.4", labReplies()).map((r) => {
      if (r.source !== "jsz") return r;
      const body = structuredClone(r.body) as LabBody;
      for (const a of body.data.account_details ?? [])
        for (const s of a.stream_detail ?? []) delete s.config.allow_direct;
      return { ...r, body };
    });
  }

  test("the fold keeps allow_direct unknown, and no stream fires", async () => {
    await using f = await catalogWith([before29()]);
    const stored = await sqlRows(f.catalog, "SELECT DISTINCT allow_direct FROM hx.stream_opts");
    assert.deepEqual(stored, [{ allow_direct: null }]);
    assert.deepEqual(await runCheck(f.catalog, check("opt-sys-016"), f.epochs[0]!), []);
  });

  test("on 2.9.10 the R3 streams without direct gets still fire", async () => {
    assert.deepEqual(names(await run("opt-sys-016", [labReplies()])).sort(), [
      "hub/APP/ORDERS",
      "hub/APP/WORKQ",
    ]);
  });
});

describe("opt-sys-019 on a stream created again in the window", () => {
  /** ORDERS (led by n2) at last sequence `seq`, with a 2 h duplicate window and, if given, a new `created`. */
  function orders(seq: number, created?: string): ScrapeReply[] {
    return editJsz("n2", (body) => {
      const s = streamIn(body, "ORDERS");
      s.state.last_seq = seq;
      s.config.duplicate_window = 120 * 60e9;
      if (created) s.created = created;
    });
  }
  const rates = (rows: Row[]) => rows.map((r) => [r.entity_name, r.msgs_per_sec]);

  test("150 messages an epoch count alike whether the stream was created again or not", async () => {
    const again = "2026-01-01T00:00:05Z";
    const steady = await run("opt-sys-019", [orders(100_000), orders(100_150), orders(100_300)]);
    assert.deepEqual(rates(steady), [["hub/APP/ORDERS", 15]]);
    const recreated = await run("opt-sys-019", [orders(100_000), orders(150, again), orders(300, again)]);
    assert.deepEqual(rates(recreated), [["hub/APP/ORDERS", 15]]);
  });
});

describe("opt-sys-008 on an account using JetStream in two domains", () => {
  test("the usage shown is the account's in the domain its limits come from", async () => {
    await using f = await catalogWith([labReplies()]);
    const rows = await runCheck(f.catalog, check("opt-sys-008"), f.epochs[0]!);
    const usage = await sqlRows(
      f.catalog,
      `SELECT a.js_domain, CAST(sum(a.js_memory) AS BIGINT) AS memory, CAST(sum(a.js_storage) AS BIGINT) AS storage
       FROM hx.account_stats a JOIN hx.account_ident i USING (account_pk)
       WHERE i.name = 'APP' AND a.js_domain IS NOT NULL GROUP BY ALL ORDER BY 1`,
    );
    // The lab's APP uses JetStream in the hub and on the leaf (its own domain).
    assert.deepEqual(
      usage.map((u) => u.js_domain),
      ["hub", "leaf"],
    );
    const hub = usage.find((u) => u.js_domain === "hub")!;
    assert.deepEqual(
      rows.map((r) => [r.entity_name, r.js_domain, r.memory_bytes, r.storage_bytes]),
      [["APP", "hub", hub.memory, hub.storage]],
    );
  });
});
