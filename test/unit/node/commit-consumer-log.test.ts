import { test } from "node:test";
import assert from "node:assert/strict";
import { commitConsumerStatusLog } from "../../../src/node/commit-consumer-log.ts";
import { captureLog, type LogLine } from "../../harness/capture-log.ts";

function capture(sinkFault: () => string | undefined) {
  const { log, lines } = captureLog<LogLine & { load_1m?: number; cpus?: number }>("debug");
  const onStatus = commitConsumerStatusLog({ log, sinkFault, setAside: () => undefined });
  return { lines, onStatus };
}

test("an unanswered consumer on a sink whose storage natsmon cannot see names every likely cause and where to look", () => {
  const { lines, onStatus } = capture(() => undefined);
  onStatus({ kind: "unanswered", detail: "timeout" });
  onStatus({ kind: "unanswered", detail: "timeout" });
  assert.equal(lines.length, 1, "said once until it answers again");
  assert.equal(lines[0]!.level, 40);
  assert.match(lines[0]!.msg, /a sink server down/);
  assert.match(lines[0]!.msg, /a leader election under way/);
  assert.match(lines[0]!.msg, /the sink's storage full or its JetStream disabled after a storage failure/);
  assert.match(lines[0]!.msg, /the sink servers' logs and `nats consumer info`/);
  assert.match(lines[0]!.msg, /this node too busy to read the consumer's heartbeats in time/);
  assert.equal(typeof lines[0]!.load_1m, "number", "the load average, to tell a busy machine");
  assert.ok(Number(lines[0]!.cpus) >= 1);
  onStatus({ kind: "pulling", detail: "" });
  assert.match(lines[1]!.msg, /answers again/);
});

test("an unanswered consumer whose sink reported a storage fault names the fault as an error", () => {
  const { lines, onStatus } = capture(() => "the disk of the data dir /d is full");
  onStatus({ kind: "unanswered", detail: "timeout" });
  assert.equal(lines[0]!.level, 50);
  assert.match(lines[0]!.msg, /not answering: the disk of the data dir \/d is full; pulling again/);
  assert.doesNotMatch(lines[0]!.msg, /election/);
});
