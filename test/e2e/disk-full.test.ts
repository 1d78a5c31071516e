import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { fillDisk, smallDisk } from "../harness/small-disk.ts";
import { waitFor } from "../harness/wait-for.ts";
import { jsonLogLines } from "../harness/capture-log.ts";

interface LogLine {
  readonly level: number;
  readonly msg?: string;
  readonly source?: string;
  readonly key?: string;
}

const logLines = (node: NatsmonProcess) => jsonLogLines<LogLine>(node.stderr());

/** Waits for the node's bus and its first folded epoch. */
async function firstEpoch(node: NatsmonProcess): Promise<void> {
  await node.waitForUrl();
  await waitFor(() => logLines(node).some((l) => l.msg === "epoch folded"), {
    message: "a first epoch folded",
    timeoutMs: 30_000,
  });
}

describe("a node on the embedded sink whose data dir's disk fills up", () => {
  test("names the full disk, not an election, restarts its stuck server once space is back, scrapes again and stops cleanly", async () => {
    await using disk = await smallDisk();
    const filler = join(disk.path, "filler");
    const node = spawnNatsmon(["run", "--data-dir", join(disk.path, "data")], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
      NATSMON_SCRAPER_INTERVAL: "1s",
    });
    try {
      await firstEpoch(node);
      const beforeFull = logLines(node).length;
      fillDisk(filler);

      const full = await waitFor(
        () => logLines(node).find((l) => l.level === 50 && /data dir .* its disk is full/.test(l.msg ?? "")),
        { message: "the data dir reported full", timeoutMs: 30_000 },
      );
      assert.match(full.msg!, new RegExp(`${disk.path}/data has 0\\.\\d MiB free`));
      assert.match(full.msg!, /free space on that disk/);
      const cause = await waitFor(
        () =>
          logLines(node)
            .slice(beforeFull)
            .find((l) => /scrape stream is not taking messages/.test(l.msg ?? "")),
        { message: "a publish to the scrape stream failing", timeoutMs: 30_000 },
      );
      assert.match(cause.msg!, /the disk of the data dir .* is full/);
      assert.doesNotMatch(cause.msg!, /election/);
      const blamingElection = logLines(node)
        .slice(beforeFull)
        .filter((l) => /election/.test(l.msg ?? ""));
      assert.deepEqual(blamingElection, [], "nothing logged while the disk is full blames an election");

      await rm(filler);
      const beforeFreed = logLines(node).length;
      await waitFor(
        () =>
          logLines(node)
            .slice(beforeFreed)
            .some((l) => /natsmon restarts the server/.test(l.msg ?? "")),
        { message: "the embedded server restarted once space is back", timeoutMs: 30_000 },
      );
      await waitFor(
        () =>
          logLines(node)
            .slice(beforeFreed)
            .some((l) => l.msg === "epoch folded"),
        { message: "an epoch folded after the restart", timeoutMs: 60_000 },
      );
      assert.deepEqual(
        logLines(node)
          .slice(beforeFreed)
          .filter((l) => /election|electing/.test(JSON.stringify(l))),
        [],
        "nothing logged while the server is restarted blames an election",
      );
      // Each role claim whose refreshes failed while the server was stuck is written again
      // (lapsed meanwhile or not): by then whatever the restart did to it has been logged.
      const failedKeys = new Set(
        logLines(node)
          .filter((l) => /cannot refresh the role claim/.test(l.msg ?? ""))
          .map((l) => l.key),
      );
      await waitFor(
        () =>
          [...failedKeys].every((key) =>
            logLines(node).some((l) => l.key === key && l.msg === "the role claim is refreshed again"),
          ),
        { message: `the role claims ${[...failedKeys].join(", ")} refreshed again`, timeoutMs: 60_000 },
      );
      const restarted = logLines(node).findIndex((l) => /natsmon restarts the server/.test(l.msg ?? ""));
      assert.deepEqual(
        logLines(node)
          .slice(restarted)
          .filter((l) =>
            /second catalog node|no epoch has come from the scraper|late refreshing/.test(l.msg ?? ""),
          ),
        [],
        "nothing after the restart blames another catalog node, the scraper, or this node for being late",
      );
      assert.equal(await node.kill("SIGTERM"), 0, node.stderr().slice(-3000));
    } finally {
      await node.kill("SIGKILL");
    }
  });

  test("the catalog side names the full disk when its consumer of the scrape stream stops answering", async () => {
    await using disk = await smallDisk();
    const node = spawnNatsmon(["run", "--data-dir", join(disk.path, "data")], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
      NATSMON_SCRAPER_INTERVAL: "1s",
    });
    try {
      await firstEpoch(node);
      const beforeFull = logLines(node).length;
      fillDisk(join(disk.path, "filler"));
      // nats-server 2.9.10 stalls its JetStream on the failed write: the pull goes unanswered.
      const quiet = await waitFor(
        () =>
          logLines(node)
            .slice(beforeFull)
            .find((l) => /scrape stream's consumer is not answering/.test(l.msg ?? "")),
        { message: "the commit consumer reported not answering", timeoutMs: 60_000 },
      );
      assert.equal(quiet.level, 50, JSON.stringify(quiet));
      assert.match(quiet.msg!, new RegExp(`the disk of the data dir ${disk.path}/data is full`));
      assert.doesNotMatch(quiet.msg!, /election/);
    } finally {
      await node.kill("SIGKILL");
    }
  });

  test("stops cleanly on SIGTERM while the disk is still full and its sink stuck", async () => {
    await using disk = await smallDisk();
    const node = spawnNatsmon(["run", "--data-dir", join(disk.path, "data")], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
      NATSMON_SCRAPER_INTERVAL: "1s",
    });
    try {
      await firstEpoch(node);
      fillDisk(join(disk.path, "filler"));
      await waitFor(
        () => logLines(node).some((l) => /scrape stream is not taking messages/.test(l.msg ?? "")),
        {
          message: "a publish to the scrape stream failing",
          timeoutMs: 30_000,
        },
      );
      assert.equal(await node.kill("SIGTERM"), 0, node.stderr().slice(-3000));
      assert.ok(logLines(node).some((l) => l.msg === "node stopped"));
    } finally {
      await node.kill("SIGKILL");
    }
  });
});
