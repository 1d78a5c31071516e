import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startEmbeddedSink } from "../../../src/bus/index.ts";
import { sinkStorageCause } from "../../../src/node/data-dir-space.ts";
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

  test("is nothing natsmon can see on an external sink", () => {
    assert.equal(sinkStorageCause(undefined, "/"), undefined);
  });
});
