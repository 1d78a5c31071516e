import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { gunzipSync, inflateRawSync } from "node:zlib";
import type { RenderedMetrics } from "../../../src/lib/index.ts";
import { acceptsGzip, MetricsGzip } from "../../../src/node/metrics-gzip.ts";

const rendered = (own: string, key: string, parts: string[]): RenderedMetrics => ({
  own,
  figures: { key, parts },
  contentType: "text/plain; version=0.0.4; charset=utf-8",
});

/** Some hundred kilobytes of figures text, in parts, with characters outside ASCII. */
const figures = Array.from({ length: 40 }, (_, f) =>
  Array.from({ length: 500 }, (_, i) => `nats_f${f}{system="east",stream="s-${i}-ü€"} ${i * f}\n`).join(""),
);

test("a gzip body is one member holding the figures then the node's own metrics, read whole by node's gunzip and the gzip program", () => {
  const gzip = new MetricsGzip();
  const own = "# HELP natsmon_x X.\n# TYPE natsmon_x gauge\nnatsmon_x 1\n";
  return gzip.body(rendered(own, "1", figures)).then((parts) => {
    const body = Buffer.concat(parts);
    const expected = figures.join("") + own;
    assert.equal(gunzipSync(body).toString(), expected);
    const program = spawnSync("gzip", ["-dc"], { input: body });
    assert.equal(program.status, 0, program.stderr.toString());
    assert.equal(program.stdout.toString(), expected);
    // One member: one deflate stream between the 10-byte header and the 8-byte trailer.
    assert.equal(inflateRawSync(body.subarray(10, -8)).toString(), expected);
    assert.ok(body.byteLength < expected.length / 5, `${body.byteLength} bytes for ${expected.length}`);
  });
});

test("the figures are compressed once per key; the node's own metrics at every body", async () => {
  const gzip = new MetricsGzip();
  const first = await gzip.body(rendered("natsmon_x 1\n", "1,2", figures));
  const second = await gzip.body(rendered("natsmon_x 2\n", "1,2", figures));
  assert.equal(second[1], first[1], "the same compressed figures");
  assert.equal(gunzipSync(Buffer.concat(second)).toString(), `${figures.join("")}natsmon_x 2\n`);
  const changed = ["nats_y 1\n"];
  const third = await gzip.body(rendered("natsmon_x 3\n", "1,3", changed));
  assert.notEqual(third[1], first[1]);
  assert.equal(gunzipSync(Buffer.concat(third)).toString(), "nats_y 1\nnatsmon_x 3\n");
  // No figures at all (no catalog open yet): the node's own metrics alone.
  const none = await gzip.body(rendered("natsmon_x 4\n", "", []));
  assert.equal(gunzipSync(Buffer.concat(none)).toString(), "natsmon_x 4\n");
});

test("Accept-Encoding: gzip by name or by *, unless its q-value is 0", () => {
  for (const header of ["gzip", "gzip, deflate, br", "deflate, gzip;q=0.5", "*", "br, *;q=0.1"])
    assert.equal(acceptsGzip(header), true, header);
  for (const header of [undefined, "", "identity", "deflate, br", "gzip;q=0", "*;q=0"])
    assert.equal(acceptsGzip(header), false, String(header));
});
