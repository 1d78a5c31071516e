import { test } from "node:test";
import assert from "node:assert/strict";
import { parseJsonExact, stringifyExact } from "../../../src/lib/index.ts";

test("integers beyond 2^53 (NATS's 2^64-1 'unlimited') survive parsing exactly", () => {
  const parsed = parseJsonExact('{"reserved_storage":18446744073709551615,"small":42,"f":1.5}') as Record<
    string,
    unknown
  >;
  assert.equal(parsed.reserved_storage, 18446744073709551615n);
  assert.equal(parsed.small, 42);
  assert.equal(parsed.f, 1.5);
  assert.equal(stringifyExact(parsed), '{"reserved_storage":18446744073709551615,"small":42,"f":1.5}');
});
