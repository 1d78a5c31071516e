import { test } from "node:test";
import assert from "node:assert/strict";
import { csvField, csvText, jsonText } from "../../../src/catalog/result-text.ts";
import { uniqueNames } from "../../../src/lib/index.ts";
import type { JsonValue } from "../../../src/catalog/render.ts";

test("unique column names: repeats get the first free suffix and unique names never change", () => {
  const cases: [string[], string[]][] = [
    [
      ["a", "b"],
      ["a", "b"],
    ],
    [
      ["a", "a", "a"],
      ["a", "a_1", "a_2"],
    ],
    [
      ["a", "a", "a_1"],
      ["a", "a_2", "a_1"],
    ],
    [
      ["count_star()", "count_star()"],
      ["count_star()", "count_star()_1"],
    ],
  ];
  for (const [given, expected] of cases) assert.deepEqual(uniqueNames(given), expected, given.join(","));
});

test("CSV fields follow RFC 4180 and keep NULL apart from the empty string", () => {
  const cases: [JsonValue, string][] = [
    [null, ""],
    ["", '""'],
    ["plain", "plain"],
    [" spaced ", " spaced "],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\r", '"cr\r"'],
    [42, "42"],
    [-1.5, "-1.5"],
    [true, "true"],
    ["18446744073709551615", "18446744073709551615"],
    [["a", "b"], '"[""a"",""b""]"'],
    [{ k: 1 }, '"{""k"":1}"'],
    [[], "[]"],
  ];
  for (const [given, expected] of cases) assert.equal(csvField(given), expected, JSON.stringify(given));
});

test("CSV has a header row, CRLF line ends and a CRLF after the last record", () => {
  const csv = csvText(["a", "b,c", "a"]);
  csv.addRow([1, "x"]);
  csv.addRow([null, ""]);
  assert.equal(csv.text(), 'a,"b,c",a\r\n1,x\r\n,""\r\n');
  assert.equal(csvText(["only"]).text(), "only\r\n");
});

test("JSON is an array of objects keyed by column name, repeats suffixed", () => {
  const json = jsonText(["a", "a", 'q"uote']);
  json.addRow([1, "x", null]);
  json.addRow([[1, 2], { k: "v" }, true]);
  assert.equal(
    json.text(),
    '[{"a":1,"a_1":"x","q\\"uote":null},{"a":[1,2],"a_1":{"k":"v"},"q\\"uote":true}]',
  );
  assert.deepEqual(JSON.parse(json.text()), [
    { a: 1, a_1: "x", 'q"uote': null },
    { a: [1, 2], a_1: { k: "v" }, 'q"uote': true },
  ]);
  assert.equal(jsonText(["a"]).text(), "[]");
});
