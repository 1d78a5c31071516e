import { test } from "node:test";
import assert from "node:assert/strict";
import { bearerCheck } from "../../../src/lib/bearer-auth.ts";

test("the configured bearer token lets a request in, with the scheme in any case", () => {
  const check = bearerCheck("s3cret-token");
  assert.equal(check("Bearer s3cret-token").kind, "ok");
  assert.equal(check("bearer s3cret-token").kind, "ok");
});

test("no header or another scheme is a missing token: a challenge without an error code", () => {
  const check = bearerCheck("s3cret-token");
  for (const header of [undefined, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearer "]) {
    const outcome = check(header);
    assert.equal(outcome.kind, "missing", String(header));
    assert.equal(outcome.kind === "missing" && outcome.challenge, 'Bearer realm="natsmon"');
  }
});

test("a wrong token, a prefix of it or a longer one is invalid_token", () => {
  const check = bearerCheck("s3cret-token");
  for (const header of [
    "Bearer wrong",
    "Bearer s3cret",
    "Bearer s3cret-token-and-more",
    "Bearer S3CRET-TOKEN",
  ]) {
    const outcome = check(header);
    assert.equal(outcome.kind, "invalid", header);
    assert.equal(
      outcome.kind === "invalid" && outcome.challenge,
      'Bearer realm="natsmon", error="invalid_token"',
    );
  }
});

test("without a configured token every request is let in", () => {
  const check = bearerCheck(undefined);
  assert.equal(check(undefined).kind, "ok");
  assert.equal(check("Bearer anything").kind, "ok");
});
