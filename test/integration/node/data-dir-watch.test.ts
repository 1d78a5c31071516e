import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createMetrics } from "../../../src/lib/index.ts";
import { startDiskWatch } from "../../../src/node/data-dir-space.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { captureLog } from "../../harness/capture-log.ts";

test("a data dir that does not exist yet is made and read, with no warning that its free space cannot be read", async () => {
  await using dir = await tempDir();
  const dataDir = join(dir.path, "new", "data");
  const { log, lines } = captureLog("debug");
  await using watch = startDiskWatch({ dir: dataDir, log, metrics: createMetrics("n1") });
  const reading = await waitFor(() => watch.current(), { message: "the first reading of the data dir" });
  assert.equal(reading.dir, dataDir);
  assert.ok(reading.totalBytes > 0, "the reading is of a real disk");
  assert.ok(existsSync(dataDir), "the data dir was made");
  // Low or full would be warned about (the test machine's disk decides that); unreadable is not.
  assert.deepEqual(
    lines.filter((l) => /cannot read the data dir|data dir watch failed/.test(l.msg)),
    [],
  );
});
