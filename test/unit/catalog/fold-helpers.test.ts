import { test } from "node:test";
import assert from "node:assert/strict";
import { sameRow } from "../../../src/catalog/key-cache.ts";
import { ENTITY_KINDS } from "../../../src/catalog/kinds/entity-kinds.ts";
import { sortedDistinct, sortStrings } from "../../../src/catalog/order.ts";

/** A deterministic spread of strings: shared prefixes, case, non-ASCII, empty. */
function words(n: number, seed: number): string[] {
  const alphabet = ["a", "B", "b", ".", "*", ">", "é", "z", "0", ""];
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    let w = "";
    const len = (x = (x * 1103515245 + 12345) % 2 ** 31) % 5;
    for (let j = 0; j < len; j++) w += alphabet[(x = (x * 1103515245 + 12345) % 2 ** 31) % alphabet.length];
    out.push(w);
  }
  return out;
}

test("sortStrings orders as Array.prototype.sort does, short lists and long", () => {
  for (const n of [0, 1, 2, 3, 7, 24, 25, 200]) {
    for (const seed of [1, 2, 3]) {
      const list = words(n, seed);
      assert.deepEqual(sortStrings([...list]), [...list].sort(), `n=${n} seed=${seed}`);
    }
  }
});

test("sortedDistinct gives each string once, in sort order", () => {
  for (const n of [0, 1, 5, 24, 60]) {
    const list = words(n, 7);
    assert.deepEqual(sortedDistinct([...list]), [...new Set(list)].sort());
  }
  assert.deepEqual(sortedDistinct(["b", "a", "b", "a"]), ["a", "b"]);
});

test("sameRow: equal values, arrays and objects item by item; any difference in a value or a key is a change", () => {
  const row = { a: 1, b: "x", c: [1, 2n, "s"], d: undefined, e: { k: [1] }, f: 2n ** 64n - 1n };
  assert.equal(sameRow(row, { ...row, c: [1, 2n, "s"], e: { k: [1] } }), true);
  assert.equal(sameRow(row, { ...row, a: 2 }), false);
  assert.equal(sameRow(row, { ...row, c: [1, 2n] }), false);
  assert.equal(sameRow(row, { ...row, c: [1, 2n, "t"] }), false);
  assert.equal(sameRow(row, { ...row, e: { k: [2] } }), false);
  assert.equal(sameRow(row, { ...row, e: { k: [1], l: 1 } }), false);
  assert.equal(sameRow(row, { ...row, f: 2n ** 64n - 2n }), false);
  // A number and a bigint of the same value are different inputs (they convert alike, and
  // the fingerprint that follows a change says so).
  assert.equal(sameRow({ a: 1 }, { a: 1n }), false);
  assert.equal(sameRow({ a: 1 }, { a: 1, b: 2 }), false);
  assert.equal(sameRow({ a: 1, b: 2 }, { a: 1 }), false);
  assert.equal(sameRow({ a: [] }, { a: {} }), false);
  assert.equal(sameRow({ a: null }, { a: undefined }), false);
});

test("a replica's natural key is the same from the fold's numbers and the table's values, and tells pairs apart", () => {
  const { keyOf } = ENTITY_KINDS.consumer_replica;
  assert.equal(keyOf({ consumer_pk: 12, server_pk: 3 }), keyOf({ consumer_pk: 12n, server_pk: 3n }));
  assert.notEqual(keyOf({ consumer_pk: 12, server_pk: 3 }), keyOf({ consumer_pk: 3, server_pk: 12 }));
  assert.notEqual(keyOf({ consumer_pk: 1, server_pk: 2 ** 21 }), keyOf({ consumer_pk: 2, server_pk: 0 }));
  // pks too large to pack still key by text, and equally from either side.
  const big = { consumer_pk: 2 ** 40, server_pk: 2 ** 30 };
  assert.equal(keyOf(big), keyOf({ consumer_pk: BigInt(2 ** 40), server_pk: BigInt(2 ** 30) }));
  assert.notEqual(keyOf(big), keyOf({ consumer_pk: 2 ** 40, server_pk: 2 ** 30 + 1 }));
});
