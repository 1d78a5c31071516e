/**
 * Metric families read from somewhere else (a catalog's latest epoch) rather than recorded as
 * they happen, rendered in the Prometheus text format with prom-client: fresh registries per
 * rendering, so a series that is gone from the figures is gone from the text, and families of
 * one name from several sources (systems) come out as one family.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { Counter, Gauge, Registry } from "prom-client";

export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  /** counter: a running total its source keeps (it restarts from 0 when the source does). */
  readonly type: "gauge" | "counter";
  readonly labelNames: readonly string[];
  readonly samples: readonly MetricSample[];
}

/**
 * Samples set between two turns of the event loop. A large system's figures are some hundred
 * thousand samples, a third of a second or more of prom-client's work: rendered at once, they
 * would hold up everything else the node does (measured: 330–440 ms in one block for 93,550).
 */
const SAMPLES_PER_TURN = 2_000;

/** The families' text; a family of a name already given adds its samples to the first. */
export async function renderFamilies(families: Iterable<MetricFamily>): Promise<string> {
  const byName = new Map<string, MetricFamily[]>();
  for (const family of families) byName.set(family.name, [...(byName.get(family.name) ?? []), family]);
  let text = "";
  let set = 0;
  for (const [name, group] of byName) {
    // A registry per family, rendered on its own: the text grows a family at a time.
    const registry = new Registry();
    const { help, type, labelNames } = group[0]!;
    const config = { name, help, labelNames: [...labelNames], registers: [registry] };
    const metric = type === "counter" ? new Counter(config) : new Gauge(config);
    for (const { labels, value } of group.flatMap((f) => f.samples)) {
      if (++set % SAMPLES_PER_TURN === 0) await yieldToEventLoop();
      if (!Number.isFinite(value)) continue;
      if (metric instanceof Gauge) metric.set(labels, value);
      // A counter's total is never negative; a source that says otherwise is not believed.
      else if (value >= 0) metric.inc(labels, value);
    }
    text += await registry.metrics();
    await yieldToEventLoop();
  }
  return text;
}
