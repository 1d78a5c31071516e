/**
 * Metric families read from somewhere else (a catalog's latest epoch) rather than recorded as
 * they happen, rendered in the Prometheus text format (0.0.4): so a series that is gone from
 * the figures is gone from the text, and families of one name from several sources (systems)
 * come out as one family.
 *
 * The text is written here rather than through prom-client's registries (which render
 * natsmon's own metrics): those take a sample at a time through `set()`, hashing its labels
 * into a key, then format it again, about 3 µs a sample; a large system's million samples
 * took 5.5 s each epoch. The text is the same as prom-client's for the same samples (a unit
 * test renders both), and promtool parses it (test/e2e/nats-metrics.test.ts).
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";

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
 * Samples handled between two turns of the event loop: a large system's figures are a
 * million samples, which rendered at once would hold up everything else the node does.
 */
const SAMPLES_PER_TURN = 5_000;

/** One source's families rendered: by name, its HELP and TYPE lines and its sample lines. */
export type RenderedFamilies = ReadonlyMap<string, { readonly head: string; readonly lines: string }>;

/**
 * The families' text; a family of a name already given adds its samples to the first. A
 * label set given twice in a family is one series: a gauge keeps the last value, a counter
 * the sum (as prom-client's set and inc do). Values that are not finite, and negative
 * counter values (a total is never negative: a source saying so is not believed), are left
 * out. Labels are written in the family's `labelNames` order; one a sample does not have is
 * left out, and one the family does not name is not written.
 */
export async function renderFamilies(families: Iterable<MetricFamily>): Promise<string> {
  return joinRendered([await renderSource(families)]).join("");
}

/**
 * One source's families (a system's), rendered as renderFamilies renders them, to be joined
 * with other sources' by joinRendered: a source whose figures did not change is not
 * rendered again. Sources must not share label sets (each system's have its `system`).
 */
export async function renderSource(families: Iterable<MetricFamily>): Promise<RenderedFamilies> {
  const byName = new Map<string, MetricFamily[]>();
  for (const family of families) {
    const group = byName.get(family.name);
    if (group) group.push(family);
    else byName.set(family.name, [family]);
  }
  const rendered = new Map<string, { head: string; lines: string }>();
  let handled = 0;
  // Families read from one row share its labels object (and their labelNames): its text is
  // made once for all of them.
  const made = new WeakMap<object, { names: readonly string[]; text: string }>();
  const textOf = (labels: Readonly<Record<string, string>>, names: readonly string[]) => {
    const known = made.get(labels);
    if (known?.names === names) return known.text;
    const text = labelText(labels, names);
    made.set(labels, { names, text });
    return text;
  };
  for (const [name, group] of byName) {
    const { help, type, labelNames } = group[0]!;
    const series = new Map<string, number>();
    for (const family of group) {
      for (const { labels, value } of family.samples) {
        if (++handled % SAMPLES_PER_TURN === 0) await yieldToEventLoop();
        if (!Number.isFinite(value) || (type === "counter" && value < 0)) continue;
        const key = textOf(labels, labelNames);
        series.set(key, type === "counter" ? (series.get(key) ?? 0) + value : value);
      }
    }
    const lines: string[] = [];
    for (const [key, value] of series) {
      if (++handled % SAMPLES_PER_TURN === 0) await yieldToEventLoop();
      lines.push(key ? `${name}{${key}} ${value}\n` : `${name} ${value}\n`);
    }
    rendered.set(name, {
      head: `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`,
      lines: lines.join(""),
    });
  }
  return rendered;
}

/**
 * The text of several sources' families, as parts to be written one after another: each
 * name once, in the order the sources first give it, with the first source's HELP and TYPE
 * and every source's samples under them.
 */
export function joinRendered(sources: readonly RenderedFamilies[]): string[] {
  const names = new Map<string, string[]>();
  for (const source of sources) {
    for (const [name, { head, lines }] of source) {
      const parts = names.get(name);
      if (parts) parts.push(lines);
      else names.set(name, [head, lines]);
    }
  }
  return [...names.values()].flat().filter((part) => part !== "");
}

/** `a="x",b="y"`: the labels the family names, in its order, values escaped. */
function labelText(labels: Readonly<Record<string, string>>, names: readonly string[]): string {
  // Parts joined: a third of the time of adding to one string (measured, 6 labels a sample).
  const parts: string[] = [];
  for (const name of names) {
    const value = labels[name];
    if (value !== undefined) parts.push(`${name}="${NEEDS_ESCAPE.test(value) ? escapeLabel(value) : value}"`);
  }
  return parts.join(",");
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabel(value: string): string {
  return escapeHelp(value).replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
