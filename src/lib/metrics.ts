/**
 * The node's metrics (`ops.metrics`) in the Prometheus text format, with prom-client: one
 * registry per node (never the global one, so two nodes in one process never mix). Stages are
 * handed the recording functions they need; lag gauges are read when the metrics are asked for.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { joinRendered, renderSource, type MetricFamily, type RenderedFamilies } from "./metric-families.ts";

/** Lag figures read at collection time: consumer pending counts. */
export type LagReader = () => Promise<
  readonly { readonly labels: Record<string, string>; readonly value: number }[]
>;

/**
 * A system's figures (its monitored NATS system's, from the catalog), or undefined while it
 * has none. `key` names what `families` would read (the epoch), and changes whenever they
 * would: they are read (and rendered) only when the key is new. A reader that cannot tell
 * the key now gives the last one it gave, so the figures last rendered stand; when
 * `families` fails, those stand too and it is asked again at the next rendering.
 */
export type FiguresReader = () => Promise<
  { readonly key: string; readonly families: () => Promise<readonly MetricFamily[]> } | undefined
>;

export interface NodeMetrics {
  epochFolded(system: string, seconds: number, rows: number): void;
  /** A commit marker the catalog side would not fold, and why (e.g. `future-epoch`). */
  markerSetAside(system: string, reason: string): void;
  /** Commit markers the scrape stream dropped before the catalog side read them: epochs never folded. */
  markersLost(system: string, count: number): void;
  checksRan(system: string, seconds: number, failed: number): void;
  transitions(system: string, status: string, count: number): void;
  /** The findings firing after a system's latest diffed epoch (its whole firing set). */
  firing(system: string, findings: Iterable<{ readonly code: string; readonly severity: string }>): void;
  scrapeBytes(system: string, source: string, bytes: number): void;
  request(endpoint: string, outcome: string): void;
  delivery(endpoint: string, kind: string, outcome: string): void;
  /** The data dir's disk: bytes free (for natsmon's user) and its size. */
  dataDirSpace(freeBytes: number, totalBytes: number): void;
  /** Commit-marker consumer pending of a system. */
  addCommitLag(read: LagReader): void;
  /** Outbox consumer pending of each endpoint. */
  addOutboxLag(read: LagReader): void;
  /** A system's figures, served by renderAll (GET /metrics), not by render (ops.metrics). */
  addSystemFigures(read: FiguresReader): void;
  /** The text exposition, and its content type. */
  render(): Promise<{ text: string; contentType: string }>;
  /** render's text and every system's figures (GET /metrics). */
  renderAll(): Promise<RenderedMetrics>;
}

/** What GET /metrics serves: natsmon's own metrics, and the systems' figures. */
export interface RenderedMetrics {
  /** render's text. */
  readonly own: string;
  /**
   * Every system's figures, as parts to write one after another (a large system's are a
   * hundred megabytes: they are not copied into one string); `key` is the same for the same
   * parts, and changes when any system's do.
   */
  readonly figures: { readonly key: string; readonly parts: readonly string[] };
  readonly contentType: string;
}

/** Numbers each rendered system's figures: RenderedMetrics.figures.key. */
const renderedIds = new WeakMap<RenderedFamilies, number>();
let lastRenderedId = 0;
function renderedId(rendered: RenderedFamilies): number {
  let id = renderedIds.get(rendered);
  if (id === undefined) renderedIds.set(rendered, (id = ++lastRenderedId));
  return id;
}

/** A system's figures as rendered, and the key they were read under (FiguresReader). */
interface RenderedEntry {
  readonly key: string;
  readonly text: Promise<RenderedFamilies | undefined>;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(nodeId: string): NodeMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ node_id: nodeId });
  const epochs = new Counter({
    name: "natsmon_epochs_folded_total",
    help: "Epochs folded into the catalog.",
    labelNames: ["system"],
    registers: [registry],
  });
  const setAside = new Counter({
    name: "natsmon_commit_markers_set_aside_total",
    help: "Commit markers the catalog side set aside without folding, by reason (future-epoch: named by a clock far ahead of the catalog node's).",
    labelNames: ["system", "reason"],
    registers: [registry],
  });
  const lost = new Counter({
    name: "natsmon_commit_markers_lost_total",
    help: "Commit markers the scrape stream dropped (its max_age or max_bytes) before the catalog side read them: epochs never folded. At least one per run lost whose count is not known.",
    labelNames: ["system"],
    registers: [registry],
  });
  const foldRows = new Counter({
    name: "natsmon_fold_rows_total",
    help: "Rows written by epoch folds.",
    labelNames: ["system"],
    registers: [registry],
  });
  const fold = new Histogram({
    name: "natsmon_fold_duration_seconds",
    help: "Time to fold one epoch into the catalog.",
    labelNames: ["system"],
    buckets: SECONDS,
    registers: [registry],
  });
  const checks = new Histogram({
    name: "natsmon_checks_duration_seconds",
    help: "Time to run every check over one epoch.",
    labelNames: ["system"],
    buckets: SECONDS,
    registers: [registry],
  });
  const checkFailures = new Counter({
    name: "natsmon_check_failures_total",
    help: "Checks that failed to run over an epoch.",
    labelNames: ["system"],
    registers: [registry],
  });
  const transitions = new Counter({
    name: "natsmon_finding_transitions_total",
    help: "Finding transitions published, by status.",
    labelNames: ["system", "status"],
    registers: [registry],
  });
  const scrapeBytes = new Counter({
    name: "natsmon_scrape_bytes_total",
    help: "Bytes of $SYS replies received by the scraper, by source.",
    labelNames: ["system", "source"],
    registers: [registry],
  });
  const requests = new Counter({
    name: "natsmon_api_requests_total",
    help: "API requests answered, by endpoint and outcome (ok or the error code).",
    labelNames: ["endpoint", "outcome"],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "natsmon_notify_attempts_total",
    help: "Notification delivery attempts, by endpoint, kind and outcome (ok, retry, rejected).",
    labelNames: ["endpoint", "kind", "outcome"],
    registers: [registry],
  });
  const dataDirFree = new Gauge({
    name: "natsmon_data_dir_free_bytes",
    help: "Free bytes on the disk of the node's data dir (DuckDB catalogs, the embedded sink's JetStream store).",
    registers: [registry],
  });
  const dataDirSize = new Gauge({
    name: "natsmon_data_dir_size_bytes",
    help: "Size in bytes of the disk of the node's data dir.",
    registers: [registry],
  });
  const firingGauge = new Gauge({
    name: "natsmon_findings_firing",
    help: "Findings firing after the system's latest diffed epoch (the finding feed's firing set), by check and severity; 0 once a check that fired has none.",
    labelNames: ["system", "code", "severity"],
    registers: [registry],
  });
  /** Per system, the code|severity pairs given a value, so that one no longer firing drops to 0. */
  const firingSeen = new Map<string, Set<string>>();
  const commitLag: LagReader[] = [];
  const figures: FiguresReader[] = [];
  /**
   * Each system's figures as last rendered, by the key they were read under: rendered again
   * only when its key changes, once for scrapes that come together (two Prometheus servers
   * of an HA pair). Only the text is kept, not the samples it was made from.
   */
  const rendered = new Map<FiguresReader, RenderedEntry>();
  const renderedFigures = async (read: FiguresReader): Promise<RenderedFamilies | undefined> => {
    const now = await read().catch(() => undefined);
    if (!now) {
      rendered.delete(read);
      return undefined;
    }
    const last = rendered.get(read);
    if (last?.key === now.key) return last.text;
    const entry: RenderedEntry = {
      key: now.key,
      text: now.families().then(
        (families) => renderSource(families),
        () => {
          // The figures last rendered stand; the next rendering asks for these again.
          if (rendered.get(read) === entry) {
            if (last) rendered.set(read, last);
            else rendered.delete(read);
          }
          return last?.text;
        },
      ),
    };
    rendered.set(read, entry);
    return entry.text;
  };
  const outboxLag: LagReader[] = [];
  const lagGauge = (name: string, help: string, labelNames: string[], readers: LagReader[]) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        for (const read of readers) {
          for (const { labels, value } of await read().catch(() => [])) this.set(labels, value);
        }
      },
    });
  lagGauge(
    "natsmon_commit_consumer_pending",
    "Commit markers the catalog side has not consumed yet (scrape stream lag).",
    ["system"],
    commitLag,
  );
  lagGauge(
    "natsmon_notify_outbox_pending",
    "Outbox entries an endpoint's sender has not consumed yet (notification lag).",
    ["endpoint"],
    outboxLag,
  );
  return {
    epochFolded(system, seconds, rows) {
      epochs.inc({ system });
      foldRows.inc({ system }, rows);
      fold.observe({ system }, seconds);
    },
    markerSetAside(system, reason) {
      setAside.inc({ system, reason });
    },
    markersLost(system, count) {
      lost.inc({ system }, count);
    },
    checksRan(system, seconds, failed) {
      checks.observe({ system }, seconds);
      if (failed > 0) checkFailures.inc({ system }, failed);
    },
    transitions(system, status, count) {
      if (count > 0) transitions.inc({ system, status }, count);
    },
    firing(system, findings) {
      const counts = new Map<string, number>();
      for (const f of findings)
        counts.set(`${f.code}|${f.severity}`, (counts.get(`${f.code}|${f.severity}`) ?? 0) + 1);
      const seen = firingSeen.get(system) ?? new Set<string>();
      firingSeen.set(system, seen);
      for (const key of counts.keys()) seen.add(key);
      for (const key of seen) {
        const [code, severity] = key.split("|") as [string, string];
        firingGauge.set({ system, code, severity }, counts.get(key) ?? 0);
      }
    },
    scrapeBytes(system, source, bytes) {
      scrapeBytes.inc({ system, source }, bytes);
    },
    request(endpoint, outcome) {
      requests.inc({ endpoint, outcome });
    },
    delivery(endpoint, kind, outcome) {
      deliveries.inc({ endpoint, kind, outcome });
    },
    dataDirSpace(freeBytes, totalBytes) {
      dataDirFree.set(freeBytes);
      dataDirSize.set(totalBytes);
    },
    addCommitLag: (read) => commitLag.push(read),
    addOutboxLag: (read) => outboxLag.push(read),
    addSystemFigures: (read) => figures.push(read),
    async render() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
    async renderAll() {
      const systems = (await Promise.all(figures.map(renderedFigures))).filter((s) => s !== undefined);
      return {
        own: await registry.metrics(),
        figures: { key: systems.map(renderedId).join(","), parts: joinRendered(systems) },
        contentType: registry.contentType,
      };
    },
  };
}

/** Metrics that record nothing, for code run outside a node (tools, benches, tests). */
export function noMetrics(): NodeMetrics {
  return {
    epochFolded: () => {},
    markerSetAside: () => {},
    markersLost: () => {},
    checksRan: () => {},
    transitions: () => {},
    firing: () => {},
    scrapeBytes: () => {},
    request: () => {},
    delivery: () => {},
    dataDirSpace: () => {},
    addCommitLag: () => {},
    addOutboxLag: () => {},
    addSystemFigures: () => {},
    render: () => Promise.resolve({ text: "", contentType: "text/plain" }),
    renderAll: () => Promise.resolve({ own: "", figures: { key: "", parts: [] }, contentType: "text/plain" }),
  };
}
