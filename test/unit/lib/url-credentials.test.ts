import { test } from "node:test";
import assert from "node:assert/strict";
import { redactUrl, urlCredentials } from "../../../src/lib/index.ts";

test("a server URL's password, or a lone token, is shown as *** and the rest as it is", () => {
  const cases: [given: string, shown: string][] = [
    ["nats://user:pass@host:4222", "nats://user:***@host:4222"],
    ["nats://user:p%40ss:w0rd@host:4222", "nats://user:***@host:4222"],
    ["nats://user:p@ss@host:4222", "nats://user:***@host:4222"],
    ["tls://user:pass@host", "tls://user:***@host"],
    ["user:pass@host:4222", "user:***@host:4222"],
    ["nats://s3cr3t-token@host:4222", "nats://***@host:4222"],
    ["nats://user:@host:4222", "nats://user:***@host:4222"],
    ["nats://host:4222", "nats://host:4222"],
    ["host:4222", "host:4222"],
    ["nats://[::1]:4222", "nats://[::1]:4222"],
    ["", ""],
  ];
  for (const [given, shown] of cases) assert.equal(redactUrl(given), shown, given);
});

test("each URL of a comma-separated list is redacted", () => {
  assert.equal(
    redactUrl("nats://a:pa@h1:4222,nats://h2:4222, nats://b:pb@h3:4222,tok@h4"),
    "nats://a:***@h1:4222,nats://h2:4222, nats://b:***@h3:4222,***@h4",
  );
});

test("a password is in no redacted URL", () => {
  for (const url of [
    "nats://u:hunter2@h",
    "nats://hunter2@h",
    "nats://u:hun@ter2@h",
    "u:hunter2@h,nats://v:hunter2@k:1",
  ]) {
    assert.doesNotMatch(redactUrl(url), /hunter2|ter2/, url);
  }
});

test("a server URL's user and password, or its lone token, are split off it, decoded", () => {
  assert.deepEqual(urlCredentials("nats://mon:p%40ss@h:4222"), {
    url: "nats://h:4222",
    user: "mon",
    password: "p@ss",
  });
  assert.deepEqual(urlCredentials("nats://u:p@ss@h"), { url: "nats://h", user: "u", password: "p@ss" });
  assert.deepEqual(urlCredentials("tok@h:4222"), { url: "h:4222", token: "tok" });
  assert.deepEqual(urlCredentials("nats://h:4222"), { url: "nats://h:4222" });
});
