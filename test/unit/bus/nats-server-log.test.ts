import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { isStorageFault, lineSplitter, parseNatsServerLogLine } from "../../../src/bus/nats-server-log.ts";

describe("a nats-server log line", () => {
  const cases = [
    ["[6674] 2026/11/27 00:33:50.534873 [INF] Server is ready", "info", "Server is ready"],
    ["[7] 2026/11/27 00:33:50.534873 [WRN] Filestore [S] x", "warn", "Filestore [S] x"],
    [
      "[7] 2026/11/27 00:33:50.534873 [ERR] JetStream resource limits exceeded for server",
      "error",
      "JetStream resource limits exceeded for server",
    ],
    ["[7] 2026/11/27 00:33:50.534873 [FTL] Error listening on port", "fatal", "Error listening on port"],
    [
      "[7] 2026/11/27 00:33:50.534873 [DBG] 127.0.0.1:5 - cid:4 - Client connection created",
      "debug",
      "127.0.0.1:5 - cid:4 - Client connection created",
    ],
    ["[7] 2026/11/27 00:33:50.534873 [TRC] <<- [PING]", "trace", "<<- [PING]"],
    ["goroutine 10 [semacquire]:", "warn", "goroutine 10 [semacquire]:"],
  ] as const;
  for (const [line, level, text] of cases) {
    test(`given ${JSON.stringify(line.slice(0, 48))}, it is ${level}`, () => {
      assert.deepEqual(parseNatsServerLogLine(line), { level, text });
    });
  }
});

describe("a storage fault nats-server reports", () => {
  test("is a disk full, JetStream's storage limits, or JetStream disabled", () => {
    for (const text of [
      "JetStream out of file resources, will be DISABLED",
      "JetStream resource limits exceeded for server",
      "Error writing to file: write /x/1.blk: no space left on device",
    ]) {
      assert.equal(isStorageFault(text), true, text);
    }
    assert.equal(isStorageFault("Server is ready"), false);
  });
});

describe("splitting nats-server's stderr into lines", () => {
  test("joins lines cut across chunks, skips blank ones, and cuts a line past the bound", () => {
    const lines: string[] = [];
    const split = lineSplitter((l) => lines.push(l), 10);
    split(Buffer.from("ab"));
    split(Buffer.from("c\n\nde\n"));
    split(Buffer.from("0123456789ABCDEF"));
    split(Buffer.from("\n"));
    assert.deepEqual(lines, ["abc", "de", "0123456789"]);
  });
});
