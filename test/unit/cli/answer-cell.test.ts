/**
 * The answer column of `deliveries log`: the status and the start of the error, readable in a
 * table row.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ANSWER_WIDTH, answerCell } from "../../../src/cli/answer-cell.ts";

test("the answer column shows the status and what the receiver said, once", () => {
  const cases: [Parameters<typeof answerCell>[0], string][] = [
    [{ status_code: 200 }, "200"],
    [{ status_code: 500, error: "HTTP 500" }, "500"],
    [{ status_code: 500, error: "HTTP 500: nope" }, "500 nope"],
    // Alertmanager's validation answer is a JSON string; its other errors {code, message}.
    [
      { status_code: 400, error: 'HTTP 400: "at least one label pair required"' },
      "400 at least one label pair required",
    ],
    [
      { status_code: 415, error: 'HTTP 415: {"code":415,"message":"unsupported media type"}' },
      "415 unsupported media type",
    ],
    [
      {
        status_code: 302,
        error:
          "HTTP 302: redirects to https://hooks.example.com/v2; natsmon does not follow redirects (the alert would not arrive): set the endpoint's url to the address that answers",
      },
      "302 redirects to https://hooks.example.com/v2; natsmon does…",
    ],
    [{ error: "no answer within 10000 ms" }, "no answer within 10000 ms"],
    [
      { status_code: 502, error: "HTTP 502: <html>\n  <body>Bad\tgateway</body>\n</html>" },
      "502 <html> <body>Bad gateway</body> </html>",
    ],
  ];
  for (const [given, expected] of cases) assert.equal(answerCell(given), expected, JSON.stringify(given));
});

test("a long answer is cut to the column's width, marked as cut", () => {
  const cell = answerCell({ status_code: 500, error: `HTTP 500: ${"x".repeat(300)}` });
  assert.equal(cell.length, ANSWER_WIDTH);
  assert.ok(cell.endsWith("…"));
});
