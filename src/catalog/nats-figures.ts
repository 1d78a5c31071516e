/**
 * The monitored NATS system's own figures as Prometheus metric families, read from the
 * catalog's latest epoch: what prometheus-nats-exporter would give, from the scrape natsmon
 * already makes (one `$SYS` scrape an epoch, no HTTP monitoring port needed on any server),
 * with what an exporter cannot know: a server that stopped answering (nats_server_up 0) and
 * each asset's leader's view only once. Served at the node's GET /metrics (node.metrics-nats).
 *
 * Each source is one query over one epoch. Labels that are NULL come out empty (Prometheus
 * treats an empty label as absent); a value that is NULL (a figure the server's version does
 * not report, a limit that is not set) is left out.
 */
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import type { FiguresReader, Logger, MetricFamily } from "../lib/index.ts";
import { EPOCH_TEXT_FORMAT } from "./epoch-bound.ts";
import { SOURCES, type Source } from "./nats-figure-sources.ts";
import type { Catalog } from "./open-catalog.ts";

/** node.metrics-nats: which of the system's figures GET /metrics serves. */
export type NatsFiguresScope = "all" | "servers" | "off";

function sourceSql(source: Source): string {
  const labels = Object.values(source.labels).map(
    (sql, i) => `coalesce(CAST(${sql} AS VARCHAR), '') AS l${i}`,
  );
  const values = source.families.map((f, i) => `CAST(${f.value} AS DOUBLE) AS v${i}`);
  return (
    `SELECT ${[...labels, ...values].join(", ")} FROM ${source.from} ` +
    `WHERE epoch = $1::TIMESTAMPTZ${source.where ? ` AND ${source.where}` : ""}` +
    (source.grouped ? " GROUP BY ALL" : "")
  );
}

/** The source's families over `epoch`, each sample labelled with `system`. */
async function readSource(
  con: DuckDBConnection,
  source: Source,
  system: string,
  epoch: string,
): Promise<MetricFamily[]> {
  // Chunk by chunk: a large system's consumers are some hundred thousand rows, whose
  // conversion at once held the node up for 150 ms; each fetch lets other work in.
  const result = await con.stream(sourceSql(source), [epoch]);
  const rows: DuckDBValue[][] = [];
  for (let chunk = await result.fetchChunk(); chunk?.rowCount; chunk = await result.fetchChunk())
    for (const row of chunk.getRows()) rows.push(row);
  const names = Object.keys(source.labels);
  // One array for all the source's families, as their samples share each row's labels:
  // renderFamilies makes a row's label text once for all of them.
  const labelNames = ["system", ...names];
  const labelled = rows.map((row) => {
    const labels: Record<string, string> = { system };
    names.forEach((name, i) => (labels[name] = String(row[i])));
    return { labels, row };
  });
  return source.families.map((family, f) => ({
    name: family.name,
    help: family.help,
    type: family.counter ? "counter" : "gauge",
    labelNames,
    samples: labelled.flatMap(({ labels, row }) => {
      const value = row[names.length + f];
      return value === null || value === undefined ? [] : [{ labels, value: Number(value) }];
    }),
  }));
}

/**
 * How long a read waits for a connection: every one may be held by long queries, and a
 * Prometheus scrape gives up after 10 s by default.
 */
const CONNECTION_WAIT_MS = 3_000;

/**
 * Reads the system's figures from its catalog's latest epoch. Undefined while the catalog is
 * not open, or holds no epoch; `scope` "servers" leaves out streams and consumers. The key is
 * the latest epoch's; the families are read only when asked for (a new epoch). When no
 * connection frees up in time, or a read fails, the figures last rendered stand (logged): the
 * key last given is given again, so a busy catalog does not blank the series.
 */
export function natsFiguresReader(
  system: string,
  scope: Exclude<NatsFiguresScope, "off">,
  catalog: () => Catalog | undefined,
  log: Logger,
): FiguresReader {
  let lastKey: string | undefined;
  const warn = (err: unknown) =>
    log.warn(
      { err },
      "the system's figures for GET /metrics could not be read; the last ones read are served",
    );
  return async () => {
    const open = catalog();
    if (!open || open.closing) return undefined;
    try {
      const latest = await open.withReader(async (con) => {
        const reader = await con.runAndReadAll(
          `SELECT strftime(max(epoch), '${EPOCH_TEXT_FORMAT}'), epoch_us(max(epoch)) / 1e6 FROM hx.epochs`,
        );
        return reader.getRows()[0] ?? [];
      }, AbortSignal.timeout(CONNECTION_WAIT_MS));
      const [epoch, at] = latest;
      if (typeof epoch !== "string") return undefined;
      const key = `${system} ${epoch}`;
      lastKey = key;
      const families = () =>
        open
          .withReader(
            (con) => readFamilies(con, system, scope, epoch, Number(at)),
            AbortSignal.timeout(CONNECTION_WAIT_MS),
          )
          .catch((err: unknown) => {
            if (!open.closing) warn(err);
            throw err;
          });
      return { key, families };
    } catch (err) {
      if (open.closing) return undefined;
      warn(err);
      if (lastKey === undefined) return undefined;
      return {
        key: lastKey,
        families: () => Promise.reject(err instanceof Error ? err : new Error(String(err))),
      };
    }
  };
}

/** The system's families over `epoch` (`at`: its time in seconds). */
async function readFamilies(
  con: DuckDBConnection,
  system: string,
  scope: Exclude<NatsFiguresScope, "off">,
  epoch: string,
  at: number,
): Promise<MetricFamily[]> {
  const families: MetricFamily[] = [
    {
      name: "natsmon_nats_epoch_timestamp_seconds",
      help: "The epoch whose figures the nats_* series of the system show (the catalog's latest).",
      type: "gauge",
      labelNames: ["system"],
      samples: [{ labels: { system }, value: at }],
    },
  ];
  for (const source of SOURCES) {
    if (source.assets && scope !== "all") continue;
    families.push(...(await readSource(con, source, system, epoch)));
  }
  return families;
}
