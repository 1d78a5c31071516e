import { test } from "node:test";
import assert from "node:assert/strict";
import { createMetrics, type RenderedMetrics } from "../../../src/lib/index.ts";

/** The natsmon_findings_firing samples of the exposition: `code severity system` → value. */
async function firing(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { text } = await metrics.render();
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.startsWith("natsmon_findings_firing{"))
      .map((l) => {
        const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(l)?.[1];
        return [`${label("code")} ${label("severity")} ${label("system")}`, Number(l.split(" ").at(-1))];
      }),
  );
}

test("natsmon_findings_firing counts each system's firing set by check and severity, and drops to 0 what stopped", async () => {
  const metrics = createMetrics("n1");
  metrics.firing("a", [
    { code: "server-011", severity: "warning" },
    { code: "jetstream-002", severity: "warning" },
    { code: "jetstream-002", severity: "warning" },
    { code: "jetstream-002", severity: "critical" },
  ]);
  metrics.firing("b", [{ code: "server-011", severity: "critical" }]);
  assert.deepEqual(await firing(metrics), {
    "server-011 warning a": 1,
    "jetstream-002 warning a": 2,
    "jetstream-002 critical a": 1,
    "server-011 critical b": 1,
  });
  // The next diff of system a: one stream resolved, one changed severity, server-011 cleared.
  metrics.firing("a", [{ code: "jetstream-002", severity: "warning" }]);
  assert.deepEqual(await firing(metrics), {
    "server-011 warning a": 0,
    "jetstream-002 warning a": 1,
    "jetstream-002 critical a": 0,
    "server-011 critical b": 1,
  });
  const { text } = await metrics.render();
  assert.match(text, /^# TYPE natsmon_findings_firing gauge$/m);
  assert.match(text, /^natsmon_findings_firing\{[^}]*node_id="n1"[^}]*\} /m);
});

/** What GET /metrics serves, uncompressed. */
const allText = (rendered: RenderedMetrics) => rendered.own + rendered.figures.parts.join("");

/** A one-sample gauge family of `system`'s server s1. */
const serverGauge = (system: string, value: number, name = "nats_server_connections") => ({
  name,
  help: `${name}.`,
  type: "gauge" as const,
  labelNames: ["system", "server"],
  samples: [{ labels: { system, server: "s1" }, value }],
});

test("renderAll follows ops.metrics's text with every system's figures, one family per name, and a system's new figures once its key changes", async () => {
  const metrics = createMetrics("n1");
  const family = (system: string, value: number) => serverGauge(system, value);
  let epoch = 1;
  let readsOfA = 0;
  metrics.addSystemFigures(() =>
    Promise.resolve({
      key: `a ${epoch}`,
      families: () => {
        readsOfA++;
        return Promise.resolve([family("a", epoch * 10)]);
      },
    }),
  );
  metrics.addSystemFigures(() =>
    Promise.resolve({
      key: "b",
      families: () =>
        Promise.resolve([
          family("b", 7),
          {
            name: "nats_server_received_messages_total",
            help: "Messages received.",
            type: "counter",
            labelNames: ["system", "server"],
            // A negative total or a value that is no number is not believed: left out.
            samples: [
              { labels: { system: "b", server: "s1" }, value: 42 },
              { labels: { system: "b", server: "s2" }, value: -1 },
              { labels: { system: "b", server: "s3" }, value: Number.NaN },
            ],
          },
        ]),
    }),
  );
  // A system whose catalog is not open, or failing, adds nothing.
  metrics.addSystemFigures(() => Promise.resolve(undefined));
  metrics.addSystemFigures(() => Promise.reject(new Error("closed")));

  const { text: own } = await metrics.render();
  const first = allText(await metrics.renderAll());
  assert.ok(first.startsWith(own));
  const figures = first.slice(own.length);
  assert.equal(figures.match(/^# TYPE nats_server_connections gauge$/gm)?.length, 1);
  assert.match(figures, /^nats_server_connections\{system="a",server="s1"\} 10$/m);
  assert.match(figures, /^nats_server_connections\{system="b",server="s1"\} 7$/m);
  assert.match(figures, /^# TYPE nats_server_received_messages_total counter$/m);
  assert.match(figures, /^nats_server_received_messages_total\{system="b",server="s1"\} 42$/m);
  assert.doesNotMatch(figures, /server="s[23]"/);
  assert.doesNotMatch(own, /nats_server/, "ops.metrics has none of them");

  // The same keys: nothing read again.
  assert.equal(allText(await metrics.renderAll()), first);
  assert.equal(readsOfA, 1);
  epoch = 2;
  const second = allText(await metrics.renderAll());
  assert.match(second, /^nats_server_connections\{system="a",server="s1"\} 20$/m);
  assert.match(second, /^nats_server_connections\{system="b",server="s1"\} 7$/m);
  assert.equal(readsOfA, 2);
});

test("scrapes that come together while a system's figures are new render them once", async () => {
  const metrics = createMetrics("n1");
  let rendered = 0;
  metrics.addSystemFigures(() =>
    Promise.resolve({
      key: "a 1",
      families() {
        rendered++;
        return Promise.resolve([
          {
            name: "nats_server_up",
            help: "Up.",
            type: "gauge" as const,
            labelNames: ["system", "server"],
            samples: [{ labels: { system: "a", server: "s1" }, value: 1 }],
          },
        ]);
      },
    }),
  );
  const texts = await Promise.all([metrics.renderAll(), metrics.renderAll(), metrics.renderAll()]);
  assert.equal(rendered, 1);
  for (const rendered of texts)
    assert.match(allText(rendered), /^nats_server_up\{system="a",server="s1"\} 1$/m);
});

test("a system whose new figures cannot be read keeps the ones last rendered, and is asked again at the next rendering; the others are not read again", async () => {
  const metrics = createMetrics("n1");
  const up = (system: string, value: number) => [serverGauge(system, value, "nats_server_up")];
  let epoch = 1;
  let failing = false;
  const reads = { a: 0, b: 0 };
  metrics.addSystemFigures(() =>
    Promise.resolve({
      key: `a ${epoch}`,
      families: () => {
        reads.a++;
        return failing ? Promise.reject(new Error("no connection")) : Promise.resolve(up("a", epoch));
      },
    }),
  );
  metrics.addSystemFigures(() =>
    Promise.resolve({
      key: "b 1",
      families: () => {
        reads.b++;
        return Promise.resolve(up("b", 5));
      },
    }),
  );
  const text = async () => allText(await metrics.renderAll());
  assert.match(await text(), /^nats_server_up\{system="a",server="s1"\} 1$/m);
  epoch = 2;
  failing = true;
  const held = await text();
  assert.match(held, /^nats_server_up\{system="a",server="s1"\} 1$/m, "the last figures, not none");
  assert.match(held, /^nats_server_up\{system="b",server="s1"\} 5$/m);
  failing = false;
  const after = await text();
  assert.match(after, /^nats_server_up\{system="a",server="s1"\} 2$/m);
  assert.equal(after.match(/^# TYPE nats_server_up gauge$/gm)?.length, 1);
  assert.deepEqual(reads, { a: 3, b: 1 });
});
