/**
 * In operator mode an account's id is its public key, which no one reads: every check whose
 * finding is an account names it by its JWT's name, as the servers tag it. Each account
 * check's firing fixture is folded with every account given a name tag (account STATZ `name`,
 * as 2.11 and later send it, and JSZ's), and each finding must carry its own account's tag.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { CHECKS } from "../../../src/checks/index.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";
import { FIXTURES } from "./fixtures/index.ts";

type Json = Record<string, unknown>;

const tagOf = (account: string) => `jwt-name-of-${account}`;

/**
 * The replies with each account carrying its JWT's name where servers report it: account
 * STATZ `name`, and JSZ account_details `name` beside its `id`.
 */
function tagged(replies: readonly ScrapeReply[]): ScrapeReply[] {
  return replies.map((reply) => {
    if (reply.source !== "accstatz" && reply.source !== "jsz") return reply;
    const body = structuredClone(reply.body) as {
      data?: { account_statz?: Json[]; account_details?: Json[] };
    };
    for (const entry of body.data?.account_statz ?? []) entry.name = tagOf(String(entry.acc));
    for (const detail of body.data?.account_details ?? []) {
      const id = String(detail.id ?? detail.name);
      Object.assign(detail, { id, name: tagOf(id) });
    }
    return { ...reply, body };
  });
}

function taggedEpoch(epoch: FixtureEpoch): FixtureEpoch {
  return "replies" in epoch ? { ...epoch, replies: tagged(epoch.replies) } : tagged(epoch);
}

const ACCOUNT_CHECKS = CHECKS.filter((c) => c.scope.startsWith("account") || c.scope === "server x account");

describe("account findings name the account by its JWT's name", () => {
  for (const check of ACCOUNT_CHECKS) {
    test(check.code, async () => {
      const fixture = FIXTURES[check.code]!;
      await using tagged = await catalogWith(fixture.fires().map(taggedEpoch));
      const last = tagged.epochs.at(-1)!;
      const from = check.optimization ? tagged.epochs[0]! : last;
      const fired = await runCheck(tagged.catalog, check, last, fixture.params, from);
      assert.ok(fired.length > 0, `${check.code} did not fire with name tags`);
      const keys = new Map(
        (
          await tagged.catalog.withReader(async (con) =>
            (await con.runAndReadAll("SELECT account_pk, name FROM hx.account_ident")).getRowsJS(),
          )
        ).map(([pk, name]) => [Number(pk), name as string]),
      );
      for (const row of fired) {
        // The finding's own account's name: a label taken from another account is as wrong as the key.
        const account = keys.get(Number(row.entity_pk));
        assert.equal(row.entity_name, tagOf(String(account)), `${check.code} named account ${account}`);
      }
    });
  }
});
