import { test } from "node:test";
import assert from "node:assert/strict";
import { describeCredentials } from "../../../src/bus/index.ts";

test("a target's credentials are named without their secrets, its own before its URL's", () => {
  const cases: [Parameters<typeof describeCredentials>[0], string][] = [
    [
      { url: "nats://h:4222", creds: "/etc/natsmon/sys.creds", user: "ignored" },
      "creds file /etc/natsmon/sys.creds",
    ],
    [{ url: "nats://u:p@h:4222", user: "sys", password: "secret" }, "user sys"],
    [{ url: "nats://h:4222", token: "s3cret" }, "a token"],
    [{ url: "nats://h1:4222, nats://sys:secret@h2:4222" }, "user sys (in the URL)"],
    [{ url: "tls://t0k3n@h:4222" }, "a token (in the URL)"],
    [{ url: "nats://h:4222" }, "no credentials"],
  ];
  for (const [target, expected] of cases) {
    const said = describeCredentials(target);
    assert.equal(said, expected, JSON.stringify(target));
    assert.ok(!/secret|s3cret|t0k3n/.test(said), said);
  }
});
