/**
 * The first delivery of an endpoint whose receiver knows no alert (README: "A new endpoint
 * starts with what is firing now"): it is made once an epoch is diffed since the start, so a
 * finding that cleared while natsmon was down is neither sent firing nor resolved; with no such
 * epoch within the wait, the stored firing set goes, with a warning. Real nats-server, outbox,
 * consumers, KV and HTTP receiver; the start-up sync is called as the catalog side calls it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startHttpReceiver, type HttpReceiver } from "../../harness/http-receiver.ts";
import { waitFor } from "../../harness/wait-for.ts";
import {
  endpoint,
  FAST,
  finding,
  fire,
  resolve,
  startNotifyLab,
  webhookTrail,
  type NotifyLab,
} from "./notify-lab.ts";
import { captureLog, type LogLine as CapturedLine } from "../../harness/capture-log.ts";

interface LogLine extends CapturedLine {
  readonly level: number;
  readonly msg: string;
  readonly endpoint?: string;
  readonly systems?: string[];
}

describe("the first delivery of an endpoint whose receiver knows no alert", () => {
  let lab: NotifyLab;
  let receiver: HttpReceiver;
  const { sent, until } = webhookTrail(() => receiver);

  before(async () => {
    lab = await startNotifyLab("first");
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await lab?.[Symbol.asyncDispose]();
    await receiver?.[Symbol.asyncDispose]();
  });

  test("waits for an epoch diffed since the start: what cleared meanwhile is not sent", async () => {
    const old = endpoint({ name: "old", url: `${receiver.url}/old` });
    await lab.start([old]);
    const stopped = await lab.epoch([fire(finding(1)), fire(finding(2))]);
    await until("/old", "firing server-011 1");
    await until("/old", "firing server-011 2");

    // Restarted with a new endpoint; the catalog syncs the baseline saved before the stop.
    const notifier = await lab.start([old, endpoint({ name: "new", url: `${receiver.url}/new` })]);
    await notifier.syncFiring(
      "east",
      stopped,
      new Map([
        ["1", finding(1)],
        ["2", finding(2)],
      ]),
    );
    // The first epoch after the start: entity 1 cleared while the node was down.
    await lab.epoch([resolve(finding(1), new Date())]);
    await until("/new", "firing server-011 2");
    await until("/old", "resolved server-011 1");
    // A later change arrives behind anything the start sent.
    await lab.epoch([fire(finding(3))]);
    await until("/new", "firing server-011 3");
    assert.deepEqual(sent("/new"), ["firing server-011 2", "firing server-011 3"]);
  });

  test("with no epoch diffed within the wait, the stored firing set goes, with a warning", async () => {
    const { log, lines } = captureLog<LogLine>("info");
    await lab.start(
      [endpoint({ name: "waiting", url: `${receiver.url}/waiting` })],
      { ...FAST, freshEpochWaitMs: 500 },
      new Map(),
      undefined,
      log,
    );
    await waitFor(() =>
      lines.find(
        (l) =>
          l.endpoint === "waiting" && l.msg.includes("first delivery waits for an epoch scraped since start"),
      ),
    );
    // No epoch is diffed (the scraper stopped, or the catalog did not open): the stored set goes.
    await until("/waiting", "firing server-011 2");
    const warning = lines.find((l) => l.endpoint === "waiting" && l.level === 40);
    assert.ok(warning, "a warning says the stored firing set was sent");
    assert.match(warning.msg, /no epoch of these systems scraped since start observed everything/);
    assert.deepEqual(warning.systems, ["east"]);
    assert.deepEqual(sent("/waiting"), ["firing server-011 2", "firing server-011 3"]);
  });
});
