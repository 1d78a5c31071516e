import { test } from "node:test";
import assert from "node:assert/strict";
import { Counter, Gauge, Registry } from "prom-client";
import { renderFamilies, type MetricFamily } from "../../../src/lib/index.ts";

/** The same families through prom-client's registries, as natsmon rendered them before. */
async function promClientText(families: readonly MetricFamily[]): Promise<string> {
  const byName = new Map<string, MetricFamily[]>();
  for (const f of families) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
  let text = "";
  for (const [name, group] of byName) {
    const registry = new Registry();
    const { help, type, labelNames } = group[0]!;
    const config = { name, help, labelNames: [...labelNames], registers: [registry] };
    const metric = type === "counter" ? new Counter(config) : new Gauge(config);
    for (const { labels, value } of group.flatMap((f) => f.samples)) {
      if (!Number.isFinite(value)) continue;
      if (metric instanceof Gauge) metric.set(labels, value);
      else if (value >= 0) metric.inc(labels, value);
    }
    text += await registry.metrics();
  }
  return text;
}

/** A deterministic spread of label values, escapes among them. */
function labelValue(i: number): string {
  const odd = ["back\\slash", 'a "quoted" name', "two\nlines", "ünïcødé €", "", "end\\", '"'];
  return i % 5 === 0 ? odd[(i / 5) % odd.length]! : `v${i}`;
}

test("renderFamilies writes the text prom-client writes for the same samples, escapes, duplicates and dropped values included", async () => {
  const shared = ["system", "stream", "consumer"];
  const rows = Array.from({ length: 300 }, (_, i) => ({
    system: i % 2 ? "east" : "west",
    stream: labelValue(i),
    consumer: `c${i % 7}`,
  }));
  const families: MetricFamily[] = [
    {
      name: "nats_consumer_pending_messages",
      help: "Pending messages, with a back\\slash and a\nline break in the help.",
      type: "gauge",
      labelNames: shared,
      // Rows repeat (the same label set twice): a gauge keeps the last value.
      samples: [...rows, ...rows.slice(0, 20)].map((labels, i) => ({ labels, value: i * 1.5 - 7 })),
    },
    {
      name: "nats_consumer_delivered_total",
      help: "Delivered.",
      type: "counter",
      labelNames: shared,
      // A counter sums a repeated label set; negative and non-finite values are left out.
      samples: [...rows, ...rows.slice(5, 30)].map((labels, i) => ({
        labels,
        value: i % 11 === 3 ? -1 : i % 13 === 4 ? Number.NaN : i % 17 === 5 ? Infinity : i * 1e15,
      })),
    },
    {
      name: "nats_server_up",
      help: "Up.",
      type: "gauge",
      labelNames: ["system", "server"],
      // A label the sample does not have is left out; a family with none is one line per sample.
      samples: [
        { labels: { system: "east", server: "n1" }, value: 1 },
        { labels: { system: "east" }, value: 0 },
        { labels: { system: "east", server: "n3" }, value: 0.000001 },
      ],
    },
    { name: "natsmon_nothing", help: "No samples.", type: "gauge", labelNames: ["system"], samples: [] },
    {
      name: "natsmon_plain",
      help: "No labels.",
      type: "counter",
      labelNames: [],
      samples: [{ labels: {}, value: 3 }],
    },
    // The same name from another source (system) joins the first family.
    {
      name: "nats_server_up",
      help: "Up.",
      type: "gauge",
      labelNames: ["system", "server"],
      samples: [{ labels: { system: "west", server: "n1" }, value: 1 }],
    },
  ];
  const ours = await renderFamilies(families);
  assert.equal(ours, await promClientText(families));
  // What the comparison covers is really in the text.
  assert.match(
    ours,
    /^nats_consumer_pending_messages\{system="west",stream="back\\\\slash",consumer="c0"\} /m,
  );
  assert.match(ours, /stream="a \\"quoted\\" name"/);
  assert.match(ours, /stream="two\\nlines"/);
  assert.match(
    ours,
    /^# HELP nats_consumer_pending_messages Pending messages, with a back\\\\slash and a\\nline break in the help\.$/m,
  );
  assert.match(ours, /^nats_server_up\{system="east"\} 0$/m);
  assert.match(ours, /^nats_server_up\{system="west",server="n1"\} 1$/m);
  assert.match(ours, /^natsmon_plain 3$/m);
  assert.match(ours, /^# TYPE natsmon_nothing gauge$/m);
  assert.doesNotMatch(ours, /NaN|Inf|Nan/);
  assert.equal(ours.match(/^# TYPE nats_server_up gauge$/gm)?.length, 1);
  // Rows i and i + 70 (i a multiple of 5) have the same labels, and 20 rows come twice: one
  // series each.
  const series = new Set(rows.map((r) => `${r.system} ${r.stream} ${r.consumer}`)).size;
  assert.ok(series < 300);
  assert.equal(ours.match(/^nats_consumer_pending_messages\{/gm)?.length, series);
  assert.equal(await renderFamilies([]), "");
});

test("families sharing each row's labels object get the same text as families with labels of their own", async () => {
  const names = ["system", "server"];
  const rows = Array.from({ length: 50 }, (_, i) => ({ system: "s", server: labelValue(i) }));
  const shared: MetricFamily[] = ["a", "b"].map((n) => ({
    name: `nats_${n}`,
    help: n,
    type: "gauge",
    labelNames: names,
    samples: rows.map((labels, i) => ({ labels, value: i })),
  }));
  // The same labels objects under another family's label names: not the first family's text.
  const other: MetricFamily = {
    name: "nats_c",
    help: "c",
    type: "gauge",
    labelNames: ["server"],
    samples: rows.map((labels, i) => ({ labels, value: i })),
  };
  const copied = [...shared, other].map((f) => ({
    ...f,
    labelNames: [...f.labelNames],
    samples: f.samples.map((s) => ({ labels: { ...s.labels }, value: s.value })),
  }));
  const text = await renderFamilies([...shared, other]);
  assert.equal(text, await renderFamilies(copied));
  // prom-client refuses a label the family does not name: give it only the named ones.
  const named = copied.map((f) => ({
    ...f,
    samples: f.samples.map((s) => ({
      labels: Object.fromEntries(f.labelNames.map((n) => [n, s.labels[n]!])),
      value: s.value,
    })),
  }));
  assert.equal(text, await promClientText(named));
  assert.match(text, /^nats_c\{server="v1"\} 1$/m);
});
