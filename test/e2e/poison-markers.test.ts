import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { nodeSubjects, systemSubjects, type CommitMarker } from "../../src/protocol/index.ts";
import { spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

const subjects = systemSubjects("local");

test("an unreadable marker is set aside and a marker whose parts are gone is folded with the loss recorded", async () => {
  await using dir = await tempDir();
  await using node = spawnNatsmon(["run", "--data-dir", dir.path], {
    NATSMON_SINK_EMBEDDED_PORT: "-1",
    NATSMON_SCRAPER_INTERVAL: "1h",
  });
  const nc = await connect({ servers: await node.waitForUrl() });
  try {
    const js = jetstream(nc);
    const unreadable = await js.publish(subjects.scrapeCommit, "this is not JSON");
    // A recent epoch: an old one would be removed by retention (768 h by default) right after its fold.
    const epoch = new Date(Date.now() - 60_000).toISOString();
    const lost: CommitMarker = {
      system_id: "local",
      epoch,
      finished_at: epoch,
      parts: [{ source: "varz", server: "ghost", seqs: [987654], bytes: 10 }],
      servers_expected: ["ghost"],
      servers_answered: ["ghost"],
      unsupported: [],
      errors: [],
    };
    await js.publish(subjects.scrapeCommit, JSON.stringify(lost));
    const query = async <T>(sql: string): Promise<T[]> =>
      (await nc.request(subjects.dbQuery, JSON.stringify({ sql }), { timeout: 5000 })).json<T[]>();
    const row = await waitFor(
      async () =>
        (
          await query<{ errors: string[]; servers_partial: string[] }>(
            `SELECT errors, servers_partial FROM hx.epochs WHERE epoch = '${epoch}'::TIMESTAMPTZ`,
          )
        )[0],
      { message: "the epoch with missing parts to be folded" },
    );
    assert.ok(
      row.errors.some((e) => /no longer in the stream/.test(e)),
      JSON.stringify(row),
    );
    // Its server's rows are not there: it counts as having answered only part of the epoch, so
    // the findings diff holds its findings instead of resolving them.
    assert.deepEqual(row.servers_partial, ["ghost"]);
    // The scraper's own epoch was folded too: the bad markers held nothing up.
    await waitFor(
      async () => (await query<{ n: number }>("SELECT count(*)::INTEGER AS n FROM hx.epochs"))[0]?.n === 2,
      {
        message: "the scraper's own epoch to be folded after the bad markers",
      },
    );
    // The unreadable marker is said and counted, not dropped in silence.
    const said = jsonLogLines<{ level: number; msg: string; seq?: number }>(node.stderr()).filter(
      (l) => l.level === 50 && /commit marker in the scrape stream is unreadable/.test(l.msg),
    );
    assert.deepEqual(
      said.map((l) => l.seq),
      [unreadable.seq],
    );
    const metrics = (await nc.request(nodeSubjects("local").opsMetrics, "", { timeout: 10_000 })).string();
    assert.match(
      metrics,
      /natsmon_commit_markers_set_aside_total\{[^}]*reason="unreadable"[^}]*\} 1\b/,
      metrics,
    );
  } finally {
    await nc.close();
  }
});
