import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createMetrics } from "../../../src/lib/index.ts";
import { describeDiskSpace, diskLevel, DiskLevel } from "../../../src/node/data-dir-space.ts";

const MiB = 1024 * 1024;

describe("how full the data dir's disk is", () => {
  const cases = [
    [100 * MiB, 100 * MiB, DiskLevel.Ok],
    [10 * MiB, 100 * MiB, DiskLevel.Ok],
    [9.9 * MiB, 100 * MiB, DiskLevel.Low],
    [2 * MiB, 100 * MiB, DiskLevel.Low],
    [1.9 * MiB, 100 * MiB, DiskLevel.Full],
    [0, 100 * MiB, DiskLevel.Full],
  ] as const;
  for (const [free, total, level] of cases) {
    test(`given ${free / MiB} MiB free of ${total / MiB} MiB, it is ${level}`, () => {
      assert.equal(diskLevel(free, total), level);
    });
  }

  test("is described with what is free, of what, and the share", () => {
    const reading = { dir: "/d", freeBytes: 0.5 * MiB, totalBytes: 20 * MiB, level: DiskLevel.Full };
    assert.equal(describeDiskSpace(reading), "0.5 MiB free of 20.0 MiB (2%)");
  });

  test("is in the node's metrics", async () => {
    const metrics = createMetrics("n1");
    metrics.dataDirSpace(3 * MiB, 20 * MiB);
    const { text } = await metrics.render();
    assert.match(text, /^natsmon_data_dir_free_bytes\{node_id="n1"\} 3145728$/m);
    assert.match(text, /^natsmon_data_dir_size_bytes\{node_id="n1"\} 20971520$/m);
  });
});
