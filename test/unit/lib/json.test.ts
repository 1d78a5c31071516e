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

test("text without a 16-digit run is parsed plainly, and safe 16-digit integers stay numbers", () => {
  assert.deepEqual(parseJsonExact('{"a":123456789012345,"b":-1.5,"c":"x"}'), {
    a: 123456789012345,
    b: -1.5,
    c: "x",
  });
  assert.deepEqual(parseJsonExact('{"a":9007199254740991,"b":9007199254740993}'), {
    a: 9007199254740991,
    b: 9007199254740993n,
  });
});
