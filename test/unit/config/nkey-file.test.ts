import { test } from "node:test";
import assert from "node:assert/strict";
import { nkeys } from "@nats-io/nats-core";
import { nkeyProblem } from "../../../src/config/nkey-file.ts";

const text = (s: string) => new TextEncoder().encode(s);
const seedOf = (pair: { getSeed(): Uint8Array }) => new TextDecoder().decode(pair.getSeed());

test("an NKEY seed file: a user's seed, with or without line breaks around it, and nothing else", () => {
  const seed = seedOf(nkeys.createUser());
  assert.equal(nkeyProblem(text(seed)), undefined);
  assert.equal(nkeyProblem(text(`${seed}\n`)), undefined);
  assert.equal(nkeyProblem(text(`\n${seed}\r\n`)), undefined);

  assert.match(nkeyProblem(text("")) ?? "", /^is empty: /);
  assert.match(
    nkeyProblem(text(`${nkeys.createUser().getPublicKey()}\n`)) ?? "",
    /^holds a public key, not a seed/,
  );
  assert.equal(
    nkeyProblem(text(seedOf(nkeys.createOperator()))),
    "holds the seed of an operator key, not of a user (SU…)",
  );
  assert.equal(
    nkeyProblem(text(seedOf(nkeys.createServer()))),
    "holds the seed of a server key, not of a user (SU…)",
  );
  const broken = `${seed.slice(0, -4)}AAAA`;
  const problem = nkeyProblem(text(broken)) ?? "";
  assert.match(problem, /^holds no NKEY seed the NATS client can use/);
  assert.ok(!problem.includes(broken.slice(2, 20)), "the seed is never quoted");
});
