import { test } from "node:test";
import assert from "node:assert/strict";
import { systemAccountProblem, type SystemAccountCheck } from "../../../src/scrape/index.ts";

const who = { systemId: "prod", url: "nats://sys:***@n1:4222", credentials: "user app" };

test("an answered probe, or one nothing came back to, is no account problem", () => {
  for (const check of [
    { kind: "answered" },
    { kind: "unanswered", timeoutMs: 5000 },
  ] as SystemAccountCheck[]) {
    assert.equal(systemAccountProblem(check, who), undefined, check.kind);
  }
});

test("no responders names the system, URL, user, server and release, and says to use a system-account user", () => {
  const on29 = systemAccountProblem({ kind: "other-account", server: "n1", version: "2.9.10" }, who)!;
  assert.match(
    on29,
    /^the connection to the monitored system prod at nats:\/\/sys:\*\*\*@n1:4222 \(user app\) is not in the system account/,
  );
  assert.match(on29, /"no responders" from server n1/);
  assert.match(on29, /nats-server 2\.9\.10 does not say which account it is in/);
  assert.match(on29, /use a user of the system account/);
  assert.match(on29, /imports the \$SYS\.REQ\.SERVER\.PING\.> services/);
  const on210 = systemAccountProblem(
    { kind: "other-account", server: "n1", version: "2.10.0", user: "app", account: "APP" },
    who,
  )!;
  assert.match(on210, /the server says it is user app of account APP/);
});

test("a refused publish or reply inbox names the subject and the grant to add", () => {
  const publish = systemAccountProblem(
    { kind: "refused", operation: "publish", subject: "$SYS.REQ.SERVER.PING.STATSZ" },
    who,
  )!;
  assert.match(publish, /may not publish to \$SYS\.REQ\.SERVER\.PING\.STATSZ/);
  assert.match(publish, /grant the user publish on \$SYS\.REQ\.>/);
  const inbox = systemAccountProblem(
    { kind: "refused", operation: "subscription", subject: "_INBOX.abc" },
    who,
  )!;
  assert.match(inbox, /may not subscribe to its reply inbox _INBOX\.abc/);
  assert.match(inbox, /grant the user subscribe on _INBOX\.>/);
});
