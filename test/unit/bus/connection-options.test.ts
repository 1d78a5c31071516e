import { test } from "node:test";
import assert from "node:assert/strict";
import { connectionOptions } from "../../../src/bus/index.ts";

test("a URL's user and password, or its lone token, are the credentials of a target that has none of its own", async () => {
  const withPassword = await connectionOptions({ url: "nats://u:p%40ss@h1:4222, nats://h2:4222" }, "t");
  assert.deepEqual(
    withPassword.servers,
    ["nats://h1:4222", "nats://h2:4222"],
    "no credentials in the servers",
  );
  assert.equal(withPassword.user, "u");
  assert.equal(withPassword.pass, "p@ss");
  const withToken = await connectionOptions({ url: "nats://h1:4222,tls://t0k3n@h2:4222" }, "t");
  assert.deepEqual(withToken.servers, ["nats://h1:4222", "tls://h2:4222"]);
  assert.equal(withToken.token, "t0k3n");
  assert.equal(withToken.user, undefined);
});

test("a target's own credentials win over its URL's", async () => {
  const options = await connectionOptions({ url: "nats://u:p@h:4222", user: "own", password: "own-p" }, "t");
  assert.equal(options.user, "own");
  assert.equal(options.pass, "own-p");
  const token = await connectionOptions({ url: "nats://u:p@h:4222", token: "own-t" }, "t");
  assert.equal(token.token, "own-t");
  assert.equal(token.user, undefined);
});
