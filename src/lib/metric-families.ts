/**
 * Metric families read from somewhere else (a catalog's latest epoch) rather than recorded as
 * they happen, rendered in the Prometheus text format with prom-client: a fresh registry per
 * rendering, so a series that is gone from the figures is gone from the text, and families of
 * one name from several sources (systems) come out as one family.
 */
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

/** The families' text; a family of a name already given adds its samples to the first. */
export async function renderFamilies(families: Iterable<MetricFamily>): Promise<string> {
  const registry = new Registry();
  const metrics = new Map<string, Counter | Gauge>();
  for (const family of families) {
    let metric = metrics.get(family.name);
    if (!metric) {
      const config = {
        name: family.name,
        help: family.help,
        labelNames: [...family.labelNames],
        registers: [registry],
      };
      metric = family.type === "counter" ? new Counter(config) : new Gauge(config);
      metrics.set(family.name, metric);
    }
    for (const { labels, value } of family.samples) {
      if (!Number.isFinite(value)) continue;
      if (metric instanceof Gauge) metric.set(labels, value);
      // A counter's total is never negative; a source that says otherwise is not believed.
      else if (value >= 0) metric.inc(labels, value);
    }
  }
  return registry.metrics();
}
