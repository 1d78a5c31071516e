import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { connectNats, startEmbeddedSink } from "../../../src/bus/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { readDiskSpace, sinkStorageCause } from "../../../src/node/data-dir-space.ts";
import { embeddedSinkRecovery } from "../../../src/node/sink-recovery.ts";
import { fillDisk, smallDisk } from "../../harness/small-disk.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const SINK = { replicas: 1, embedded: { host: "127.0.0.1", port: -1 } } as const;

describe("why the embedded sink takes no messages", () => {
  test("is nothing storage-related on a healthy sink with disk to spare", async () => {
    await using dir = await tempDir();
    await using sink = await startEmbeddedSink(SINK, dir.path);
    assert.equal(sinkStorageCause(sink, dir.path), undefined);
  });

  test("is natsmon's restart of the server, for a while after it restarted it", async () => {
    await using dir = await tempDir();
    await using sink = await startEmbeddedSink(SINK, dir.path);
    await sink.restart("its JetStream was stuck after its disk filled up");
    assert.match(
      sinkStorageCause(sink, dir.path) ?? "",
      /^natsmon restarted the embedded nats-server at \S+: its JetStream was stuck after its disk filled up; it reconnects/,
    );
  });

  test("is the disk that filled up, once space is back and until JetStream is seen answering, not nothing (which the logs put down to an election)", async () => {
    await using disk = await smallDisk();
    const dataDir = join(disk.path, "data");
    await using sink = await startEmbeddedSink(SINK, dataDir);
    const nc = await connectNats(sink.sink, "storage-cause-test");
    try {
      const recovery = embeddedSinkRecovery({ embedded: sink, nc, log: silentLogger() });
      const filler = join(disk.path, "filler");
      fillDisk(filler);
      // The data dir watch's reading finds the disk full.
      await recovery.onReading(await readDiskSpace(dataDir));
      assert.match(
        sinkStorageCause(sink, dataDir, recovery.diskFullSince()) ?? "",
        /is full \(0\.\d MiB free/,
      );
      await rm(filler);
      // Space is back; the server is not restarted yet, nor JetStream probed: a commit consumer's
      // missed heartbeats or a publish timing out now are still the full disk's doing.
      const cause = sinkStorageCause(sink, dataDir, recovery.diskFullSince()) ?? "";
      assert.match(
        cause,
        new RegExp(
          `^the disk of the data dir ${dataDir} was full at \\S+, and has \\d+\\.\\d MiB free of 20\\.0 MiB \\(\\d+%\\) now; ` +
            "the embedded nats-server's JetStream has not been seen answering since",
        ),
      );
      assert.doesNotMatch(cause, /election/);
      // The next reading probes JetStream, which answers (nothing was written while the disk was
      // full, so nothing got stuck): the trouble is over.
      await recovery.onReading(await readDiskSpace(dataDir));
      assert.equal(recovery.diskFullSince(), undefined);
      assert.equal(sinkStorageCause(sink, dataDir, recovery.diskFullSince()), undefined);
    } finally {
      await nc.close();
    }
  });

  test("is nothing natsmon can see on an external sink", () => {
    assert.equal(sinkStorageCause(undefined, "/"), undefined);
  });
});
