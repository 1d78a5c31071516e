/**
 * Commit markers the scrape stream drops before the catalog reads them: those epochs are never
 * folded, and the catalog says so (a warning with the numbers, natsmon_commit_markers_lost_total).
 * A scrape node and a catalog node run in this process on a real nats-server sink that the
 * scrape node monitors, each with a real DuckDB file or scraper; the stream's max-bytes is set
 * to about two epochs, so that with the catalog node stopped the stream really drops markers.
 * A scrape node that was down writes nothing, and nothing is reported, across restarts of both.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pino } from "pino";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Config } from "../../src/config/index.ts";
import { startNode, type RunningNode } from "../../src/node/index.ts";
import { nodeSubjects, systemAssets, systemSubjects, type CommitMarker } from "../../src/protocol/index.ts";
import { splitNodeConfig } from "../harness/split-node-config.ts";
import { startTestServer } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const SYSTEM = "local";
const MAX_BYTES = 40_000;

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly epoch?: string;
  readonly seq?: number;
  readonly lost_epochs?: number | null;
  readonly after_epoch?: string;
  readonly after_seq?: number;
  readonly last_lost_epoch?: string;
  readonly last_lost_seq?: number;
  readonly next_epoch?: string;
  readonly next_seq?: number;
  readonly max_bytes?: number;
}

/** A node `id` on the sink serving `role` of system local, which monitors the sink itself. */
function nodeConfig(dir: string, sinkUrl: string, id: string, role: "scrape" | "catalog"): Promise<Config> {
  return splitNodeConfig({
    dir,
    sinkUrl,
    id,
    role,
    scraper: `{interval: 1s, stream: {max-bytes: ${MAX_BYTES}B}}`,
  });
}

/** A node started in process, its log lines landing in `lines`. */
function start(config: Config, lines: Line[]): Promise<RunningNode> {
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  return startNode(config, { log });
}

const folded = (lines: readonly Line[]) => lines.filter((l) => l.msg === "epoch folded");
const committed = (lines: readonly Line[]) => lines.filter((l) => l.msg === "scrape committed");
const lostLines = (lines: readonly Line[]) => lines.filter((l) => /will never be folded/.test(l.msg));

describe("commit markers dropped by the scrape stream before the catalog read them", () => {
  test("with the catalog node stopped, the markers the stream drops are reported with how many and which epochs, the limits and what to raise", async () => {
    await using dir = await tempDir();
    await using sink = await startTestServer("sink");
    const scrapeLines: Line[] = [];
    await using _scrape = await start(await nodeConfig(dir.path, sink.url, "scr", "scrape"), scrapeLines);
    const catalogConfig = await nodeConfig(dir.path, sink.url, "cat", "catalog");
    const first: Line[] = [];
    const nc = await connect({ servers: sink.url });
    try {
      {
        await using _catalog = await start(catalogConfig, first);
        await waitFor(() => folded(first).length >= 2, { timeoutMs: 60_000, message: "two epochs folded" });
      }
      const lastFolded = folded(first).at(-1)!;
      // The catalog stays down while the scrape node writes epochs enough to push the markers
      // of several out of the stream (it holds about two epochs).
      const since = committed(scrapeLines).length;
      await waitFor(() => committed(scrapeLines).length >= since + 8, {
        timeoutMs: 60_000,
        message: "eight epochs committed with the catalog stopped",
      });

      const second: Line[] = [];
      const catalog = await start(catalogConfig, second);
      try {
        const warning = await waitFor(() => lostLines(second)[0], {
          timeoutMs: 60_000,
          message: "the catalog to report markers the stream dropped",
        });
        assert.equal(warning.level, 40, "a warning");
        const next = Date.parse(warning.next_epoch!);
        // Independently of the chain: the epochs the scrape node committed between the last
        // folded one and the next the catalog got, whose markers are no longer in the stream.
        const lost = committed(scrapeLines)
          .map((l) => l.epoch!)
          .filter((e) => Date.parse(e) > Date.parse(lastFolded.epoch!) && Date.parse(e) < next);
        assert.ok(lost.length >= 1, "the stream dropped at least one marker");
        assert.equal(warning.lost_epochs, lost.length, warning.msg);
        assert.equal(
          Date.parse(warning.after_epoch!),
          Date.parse(lastFolded.epoch!),
          "counted from the last epoch folded",
        );
        assert.equal(warning.after_seq, lastFolded.seq, "and its marker");
        assert.equal(warning.last_lost_epoch, lost.at(-1), "the newest lost epoch is named");
        assert.equal(warning.max_bytes, MAX_BYTES);
        assert.match(
          warning.msg,
          new RegExp(
            `^${lost.length} epochs of system local will never be folded: the scrape stream MON_SCRAPE_local dropped their commit markers before the catalog read them`,
          ),
        );
        assert.match(warning.msg, /max_bytes 39\.1KiB \(scraper\.stream\.max-bytes\) and max_age 6h/);
        assert.match(warning.msg, /raise scraper\.stream\.max-bytes/);
        assert.match(
          warning.msg,
          new RegExp(
            `up to epoch ${lost.at(-1)!.replace(/\./g, "\\.")} \\(marker ${warning.last_lost_seq}\\)`,
          ),
        );
        // The lost markers are gone from the stream indeed.
        const jsm = await jetstreamManager(nc);
        const lastLost = await jsm.streams
          .getMessage(systemAssets(SYSTEM).scrapeStream, { seq: warning.last_lost_seq! })
          .catch(() => null);
        assert.equal(lastLost, null, "the last lost marker is no longer in the stream");
        // Counted on the catalog node's metrics.
        const metrics = (await nc.request(nodeSubjects("cat").opsMetrics, "", { timeout: 10_000 })).string();
        assert.match(
          metrics,
          new RegExp(`^natsmon_commit_markers_lost_total\\{[^}]*system="local"[^}]*\\} ${lost.length}$`, "m"),
        );
        // Epochs go on being folded, and the loss is reported once.
        const foldedBefore = folded(second).length;
        await waitFor(() => folded(second).length >= foldedBefore + 3, {
          timeoutMs: 60_000,
          message: "three more epochs folded",
        });
        assert.equal(lostLines(second).length, 1, JSON.stringify(lostLines(second)));
      } finally {
        await catalog[Symbol.asyncDispose]();
      }
      assert.deepEqual(lostLines(first), [], "nothing was lost while the catalog ran");
    } finally {
      await nc.close();
    }
  });

  test("a scrape node that was down, its markers folded and then gone from the stream, gives no report across restarts", async () => {
    await using dir = await tempDir();
    await using sink = await startTestServer("sink");
    const scrapeConfig = await nodeConfig(dir.path, sink.url, "scr", "scrape");
    const catalogConfig = await nodeConfig(dir.path, sink.url, "cat", "catalog");
    const catalogLines: Line[][] = [[], []];
    const nc = await connect({ servers: sink.url });
    const jsm = await jetstreamManager(nc);
    const commit = systemSubjects(SYSTEM).scrapeCommit;
    const lastMarker = async () =>
      (await jsm.streams.getMessage(systemAssets(SYSTEM).scrapeStream, {
        last_by_subj: commit,
      }))!.json<CommitMarker>();
    try {
      let catalog = await start(catalogConfig, catalogLines[0]!);
      try {
        {
          const scrapeLines: Line[] = [];
          await using _scrape = await start(scrapeConfig, scrapeLines);
          await waitFor(() => folded(catalogLines[0]!).length >= 3, {
            timeoutMs: 60_000,
            message: "three epochs folded",
          });
        }
        // The scrape node is down: the catalog folds what is left, and is restarted meanwhile.
        const written = (await lastMarker()).epoch;
        await waitFor(() => folded(catalogLines[0]!).some((l) => l.epoch === written), {
          timeoutMs: 30_000,
          message: "the last marker written folded",
        });
        await catalog[Symbol.asyncDispose]();
        catalog = await start(catalogConfig, catalogLines[1]!);

        // Back, following the last marker in the stream: its chain goes on.
        {
          const scrapeLines: Line[] = [];
          await using _scrape = await start(scrapeConfig, scrapeLines);
          await waitFor(() => folded(catalogLines[1]!).length >= 3, {
            timeoutMs: 60_000,
            message: "three more folded",
          });
        }
        const before = await lastMarker();
        assert.ok(
          (before.commit_no ?? 0) > 3,
          `the chain went on across the scrape node's restart: ${before.commit_no}`,
        );
        await waitFor(() => folded(catalogLines[1]!).some((l) => l.epoch === before.epoch), {
          timeoutMs: 30_000,
          message: "the last marker written folded",
        });
        // Down long enough for every marker to age out (a purge stands in for max-age): the next
        // scrape node starts a new chain, and nothing it did not write is taken for lost.
        await jsm.streams.purge(systemAssets(SYSTEM).scrapeStream);
        await catalog[Symbol.asyncDispose]();
        catalog = await start(catalogConfig, catalogLines[1]!);
        {
          const scrapeLines: Line[] = [];
          await using _scrape = await start(scrapeConfig, scrapeLines);
          const seen = folded(catalogLines[1]!).length;
          await waitFor(() => folded(catalogLines[1]!).length >= seen + 3, {
            timeoutMs: 60_000,
            message: "three folded after the purge",
          });
        }
        assert.ok(((await lastMarker()).commit_no ?? 99) <= 5, "a new chain began after the purge");
      } finally {
        await catalog[Symbol.asyncDispose]();
      }
      assert.deepEqual(lostLines(catalogLines.flat()), [], "no epoch reported lost");
    } finally {
      await nc.close();
    }
  });
});

describe("epochs another catalog node folded while it held the role", () => {
  test("are named when this catalog starts again, as folded elsewhere, not lost", async () => {
    await using dir = await tempDir();
    await using sink = await startTestServer("sink");
    const config = (id: string, role: "scrape" | "catalog") =>
      splitNodeConfig({ dir: dir.path, sinkUrl: sink.url, id, role, scraper: "{interval: 1s}" });
    const scrapeLines: Line[] = [];
    await using _scrape = await start(await config("scr", "scrape"), scrapeLines);
    const first: Line[] = [];
    {
      await using _catalog = await start(await config("cat", "catalog"), first);
      await waitFor(() => folded(first).length >= 2, { timeoutMs: 60_000, message: "two epochs folded" });
    }
    // Another node, with a catalog file of its own, holds the role for a while: three epochs
    // past cat's last (it may fold cat's last again first, when cat stopped before acking it,
    // and its own last may go unacked), so at least two are acknowledged as folded by it.
    const catLast = Date.parse(folded(first).at(-1)!.epoch!);
    const other: Line[] = [];
    {
      await using _other = await start(await config("cat2", "catalog"), other);
      await waitFor(() => folded(other).filter((l) => Date.parse(l.epoch!) > catLast).length >= 3, {
        timeoutMs: 60_000,
        message: "three epochs past cat's last folded by cat2",
      });
    }
    const again: Line[] = [];
    await using _catalog = await start(await config("cat", "catalog"), again);
    const said = await waitFor(() => again.find((l) => /were folded elsewhere/.test(l.msg)), {
      timeoutMs: 60_000,
      message: "the catalog to name the epochs another node folded",
    });
    const fields = said as Line & { folded_elsewhere?: number; through_epoch?: string };
    assert.equal(said.level, 30, "info: nothing was lost");
    assert.equal(Date.parse(said.after_epoch!), Date.parse(folded(first).at(-1)!.epoch!));
    // What cat2 folded after cat's last epoch, up to where the consumer's acks stood (its last
    // fold may not have been acked before it stopped: cat folds that one again).
    const through = Date.parse(fields.through_epoch!);
    const elsewhere = folded(other).filter(
      (l) => Date.parse(l.epoch!) > Date.parse(said.after_epoch!) && Date.parse(l.epoch!) <= through,
    );
    assert.ok(elsewhere.length >= 2, JSON.stringify(fields));
    assert.equal(Date.parse(elsewhere.at(-1)!.epoch!), through, "the last named is one cat2 folded");
    assert.equal(fields.folded_elsewhere, elsewhere.length);
    assert.match(said.msg, /a node that held this system's catalog role meanwhile/);
    assert.deepEqual(lostLines(again), []);
  });
});
