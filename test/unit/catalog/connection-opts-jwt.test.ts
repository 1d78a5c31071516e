/**
 * What the fold keeps of a connection's user JWT (hx.connection_opts): nats-server 2.9.10
 * lists a JWT user's closed connection with the JWT but without `authorized_user`, and a
 * client it refused at authentication without `account` or `name_tag` either. The JWT's
 * subject, name and issuing account fill them in; what the server says wins.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionOpts } from "../../../src/catalog/kinds/connections.ts";

const USER = "UASBAISEQLLXZJZKGN3LGS2ELQFBV77VIQE2WGDNWAK6NHMX5V6C7JGW";
const ACCOUNT = "AC4NIEEX35NNMSDVVO7SYMQON633ME2MT4R6VS4MFQYG3RPZIGL4LD3N";
const SIGNING_KEY = "AB7QDJVRKRDKKL3V2PBHZQPWILWDLQ4Q64Z5FOVMIFOP34EEB6B2DW3P";

/** A user JWT with these claims (unsigned: the fold only reads claims). */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ typ: "JWT", alg: "ed25519-nkey" })}.${part(claims)}.c2ln`;
}

test("a refused client's user, name and account come from its user JWT", () => {
  const opts = connectionOpts({
    cid: 42,
    reason: "Authentication Failure",
    jwt: jwt({ sub: USER, iss: ACCOUNT, name: "gamma1", nats: { type: "user" } }),
  });
  assert.equal(opts.authorized_user, USER);
  assert.equal(opts.name_tag, "gamma1");
  assert.equal(opts.jwt_account, ACCOUNT);
  assert.equal(opts.account, undefined, "the account it was bound to: none");
  assert.equal(opts.bearer_token, false);
});

test("a JWT signed with a signing key names the account in issuer_account", () => {
  const opts = connectionOpts({
    jwt: jwt({ sub: USER, iss: SIGNING_KEY, nats: { issuer_account: ACCOUNT, bearer_token: true } }),
  });
  assert.equal(opts.jwt_account, ACCOUNT);
  assert.equal(opts.bearer_token, true);
});

test("what the server says of the user wins over the JWT", () => {
  const opts = connectionOpts({
    account: ACCOUNT,
    authorized_user: "UOTHER",
    name_tag: "tagged",
    jwt: jwt({ sub: USER, iss: ACCOUNT, name: "gamma1" }),
  });
  assert.deepEqual([opts.authorized_user, opts.name_tag], ["UOTHER", "tagged"]);
});

test("without a readable JWT nothing is made up", () => {
  for (const c of [{}, { jwt: "" }, { jwt: "not.a-jwt.at-all" }, { authorized_user: "app" }]) {
    const opts = connectionOpts(c);
    assert.equal(opts.jwt_account, undefined);
    assert.equal(opts.bearer_token, undefined);
    assert.equal(opts.authorized_user, "authorized_user" in c ? "app" : undefined);
  }
});
