/**
 * A system for findings-tracker tests: a real catalog file where each epoch is folded from
 * the lab replies and "checks" are statements returning the rows a test asks for, and the
 * system's findings-baseline bucket on a real nats-server. The tracker is wired the way
 * the catalog side wires it: latestEpochFindings and firingSince as the seed, the epoch's
 * EpochCheckResult as its input.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, findingsBucketConfig } from "../../../src/bus/index.ts";
import {
  firingSince,
  foldEpoch,
  latestEpochFindings,
  runEpochChecks,
  type Catalog,
  type CheckStatement,
} from "../../../src/catalog/index.ts";
import type { Severity } from "../../../src/domain/index.ts";
import {
  openFindingsBaseline,
  startFindingsTracker,
  type EpochFindings,
  type FindingsTracker,
} from "../../../src/findings/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import { labReplies, marker, tempCatalog } from "../catalog/lab-epoch.ts";

/** One row a fake check returns; a stream of server n1 unless told otherwise. */
export interface Row {
  code: string;
  pk: number;
  name: string;
  severity: Severity;
  type?: string;
  key?: string;
  /** `null` for a finding of no server. */
  server?: string | null;
}

export interface EpochOptions {
  /** Servers that answer (default: every lab server). */
  answered?: string[];
  /** Servers that answered only some requests (the marker's servers_partial). */
  partial?: string[];
  /** Servers expected (default: every lab server). */
  expected?: string[];
  /** Codes whose statement fails this epoch. */
  failing?: string[];
  /** Codes whose statement runs as disabled (rows stored, flagged). */
  disabled?: string[];
  /** Replies to fold in place of the lab's own. */
  replies?: ScrapeReply[];
}

/** Epoch `i`: one minute apart from 2026-11-22T10:00:00Z. */
export function epochTime(i: number): Date {
  return new Date(Date.UTC(2026, 10, 22, 10, i));
}

export interface TrackerLab extends AsyncDisposable {
  /** Folds epoch `i`, runs the checks returning `rows`, and gives what the tracker is fed. */
  epoch(i: number, rows: readonly Row[], options?: EpochOptions): Promise<EpochFindings>;
  /**
   * A tracker on `nc` for this system, seeded from this catalog; `now` is the node's clock,
   * `catalogId` the id it saves the baseline with (none: baselines are taken as its own).
   */
  tracker(
    nc: NatsConnection,
    disabledChecks?: readonly string[],
    now?: () => number,
    catalogId?: string,
  ): Promise<FindingsTracker>;
  /** Rows of a query on the catalog, as JSON objects. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  readonly catalog: Catalog;
}

export async function trackerLab(nc: NatsConnection, systemId: string): Promise<TrackerLab> {
  await ensureStream(await jetstreamManager(nc), await findingsBucketConfig(systemId, 1));
  const t = await tempCatalog();
  const log = silentLogger();
  let seq = 0;
  return {
    async epoch(i, rows, options = {}) {
      const epoch = epochTime(i).toISOString();
      const replies = options.replies ?? labReplies();
      const overrides = {
        ...(options.answered ? { servers_answered: options.answered } : {}),
        ...(options.partial ? { servers_partial: options.partial } : {}),
        ...(options.expected ? { servers_expected: options.expected } : {}),
      };
      await foldEpoch(t.catalog, { markerSeq: ++seq, marker: marker(epoch, replies, overrides), replies });
      const result = await runEpochChecks(t.catalog, epoch, statements(rows, options));
      if (!result) throw new Error(`epoch ${epoch} is not in the catalog`);
      return { epoch: new Date(epoch), ...result };
    },
    async tracker(conn, disabledChecks = [], now, catalogId) {
      return startFindingsTracker({
        ...(now ? { now } : {}),
        ...(catalogId ? { catalogId } : {}),
        store: await openFindingsBaseline(conn, systemId, log),
        disabledChecks,
        latestFindings: () => latestEpochFindings(t.catalog),
        firingSince: (epoch) => firingSince(t.catalog, epoch.toISOString()),
        log,
      });
    },
    catalog: t.catalog,
    query: (sql) => t.catalog.withReader(async (con) => (await con.runAndReadAll(sql)).getRowObjectsJS()),
    [Symbol.asyncDispose]: () => t[Symbol.asyncDispose](),
  };
}

/** One statement per code, each returning that code's rows (with the columns of hx.check_findings but disabled). */
function statements(rows: readonly Row[], options: EpochOptions): CheckStatement[] {
  const codes = [...new Set([...rows.map((r) => r.code), ...(options.failing ?? [])])].sort();
  return codes.map((code) => {
    const disabled = options.disabled?.includes(code) ?? false;
    if (options.failing?.includes(code)) {
      return { code, disabled, sql: "SELECT * FROM no_such_table WHERE $1::TIMESTAMPTZ = $2::TIMESTAMPTZ" };
    }
    const values = rows
      .filter((r) => r.code === code)
      .map(
        (r) =>
          `(${lit(r.code)}, ${lit(r.type ?? "stream")}, ${r.pk}::BIGINT, ${lit(r.key ?? null)}, ${lit(r.name)}, ` +
          `${lit(r.server === undefined ? "n1" : r.server)}, ${lit(r.severity)})`,
      );
    return {
      code,
      disabled,
      sql: `SELECT $1::TIMESTAMPTZ, code, entity_type, entity_ref, entity_key, entity_name, server, severity, '{}'
            FROM (VALUES ${values.join(", ")}) v(code, entity_type, entity_ref, entity_key, entity_name, server, severity)
            WHERE $2::TIMESTAMPTZ IS NOT NULL`,
    };
  });
}

function lit(value: string | null): string {
  return value === null ? "NULL::VARCHAR" : `'${value.replaceAll("'", "''")}'`;
}
