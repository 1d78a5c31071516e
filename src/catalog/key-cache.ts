/**
 * The writer's memory of what is committed: every entity's stable pk by natural key, the
 * next free pk per kind, and a fingerprint of each entity's latest _opts row. Loaded from
 * the tables at open; a fold stages its changes and publishes them only after COMMIT, and
 * a failed fold reloads the cache from the database, so it never runs ahead of the file.
 */
import {
  DuckDBListValue,
  DuckDBTimestampTZValue,
  type DuckDBConnection,
  type DuckDBValue,
} from "@duckdb/node-api";
import {
  ENTITY_KINDS,
  KIND_NAMES,
  identTable,
  optsTable,
  statsTable,
  type EntityKind,
  type KindName,
  type NaturalKey,
} from "./kinds/entity-kinds.ts";

export interface KindKeys {
  readonly pks: Map<NaturalKey, number>;
  readonly opts: Map<number, string>;
  /** The epoch of each entity's latest _opts row: the one in force (a _stats row's opts_epoch). */
  readonly optsEpoch: Map<number, DuckDBTimestampTZValue>;
  /**
   * The fold's input row that gave each entity's latest _opts fingerprint in this process:
   * an identical row next epoch (sameRow) needs neither conversion nor fingerprint. Not
   * loaded from the file; the first fold after open compares fingerprints. Only the entities
   * the last fold saw are kept: a connection that closed is never seen again, and keeping
   * its row would grow the cache with every connection the system ever had.
   */
  readonly raw: Map<number, RawRow>;
  /** The values of the kind's carried _stats columns (EntityKind.carried) in each entity's latest row. */
  readonly carried: Map<number, CarriedValues>;
  next: number;
}

/** Carried _stats values by column: DuckDB values read back, or values the fold wrote. */
export type CarriedValues = Readonly<Record<string, DuckDBValue>>;

export type KeyCache = { readonly [K in KindName]: KindKeys };

/**
 * A stable text form of an _opts row's values (pk and epoch left out). Both sides hold
 * DuckDB values of the column types (the fold's converted values, or values read back), so
 * equal configurations give equal fingerprints across restarts.
 */
export function fingerprint(values: readonly DuckDBValue[]): string {
  return JSON.stringify(values.map(canonical));
}

function canonical(value: DuckDBValue): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value instanceof DuckDBListValue) return value.items.map(canonical);
  // Formatting a timestamp as text is slow; its microseconds say the same.
  if (value instanceof DuckDBTimestampTZValue) return `t${value.micros}`;
  return value.toString();
}

/** The values of an _opts row that describe the configuration: everything but pk and epoch. */
export function optsValues(
  columns: readonly string[],
  pk: string,
  row: readonly DuckDBValue[],
): DuckDBValue[] {
  return row.filter((_v, i) => columns[i] !== pk && columns[i] !== "epoch");
}

async function loadKind(con: DuckDBConnection, kind: KindName): Promise<KindKeys> {
  const { pk, keyOf } = ENTITY_KINDS[kind];
  const pks = new Map<NaturalKey, number>();
  let max = 0;
  for (const ident of (await con.runAndReadAll(`SELECT * FROM hx.${identTable(kind)}`)).getRowObjectsJS()) {
    const value = Number(ident[pk]);
    pks.set(keyOf(ident), value);
    max = Math.max(max, value);
  }
  const opts = new Map<number, string>();
  const optsEpoch = new Map<number, DuckDBTimestampTZValue>();
  const latest = await con.runAndReadAll(
    `SELECT * FROM hx.${optsTable(kind)} QUALIFY row_number() OVER (PARTITION BY ${pk} ORDER BY epoch DESC) = 1`,
  );
  const columns = latest.columnNames();
  const pkIndex = columns.indexOf(pk);
  const epochIndex = columns.indexOf("epoch");
  for (const row of latest.getRows()) {
    const entity = Number(row[pkIndex]);
    opts.set(entity, fingerprint(optsValues(columns, pk, row)));
    const epoch = row[epochIndex];
    if (epoch instanceof DuckDBTimestampTZValue) optsEpoch.set(entity, epoch);
  }
  return { pks, opts, optsEpoch, raw: new Map(), carried: await loadCarried(con, kind), next: max + 1 };
}

/** Each entity's carried values, from its latest _stats row (the catalog is migrated first). */
async function loadCarried(con: DuckDBConnection, kind: KindName): Promise<Map<number, CarriedValues>> {
  const { pk } = ENTITY_KINDS[kind];
  const columns = (ENTITY_KINDS[kind] as EntityKind).carried;
  const carried = new Map<number, CarriedValues>();
  if (!columns) return carried;
  const latest = await con.runAndReadAll(
    `SELECT ${pk}, ${columns.join(", ")} FROM hx.${statsTable(kind)}
     QUALIFY row_number() OVER (PARTITION BY ${pk} ORDER BY epoch DESC) = 1`,
  );
  for (const row of latest.getRows()) {
    carried.set(Number(row[0]), Object.fromEntries(columns.map((c, i) => [c, row[i + 1] ?? null])));
  }
  return carried;
}

export async function loadKeyCache(con: DuckDBConnection): Promise<KeyCache> {
  const entries: [KindName, KindKeys][] = [];
  for (const kind of KIND_NAMES) entries.push([kind, await loadKind(con, kind)]);
  return Object.fromEntries(entries) as KeyCache;
}

/** One kind's additions in one fold. */
interface StagedKind {
  readonly committed: KindKeys;
  readonly pks: Map<NaturalKey, number>;
  readonly opts: Map<number, string>;
  readonly optsEpoch: Map<number, DuckDBTimestampTZValue>;
  /** The input rows of this fold's entities, new or unchanged: the committed `raw` once published. */
  readonly raw: Map<number, RawRow>;
  readonly carried: Map<number, CarriedValues>;
  next: number;
}

/** One fold's additions to the cache, visible to that fold only until `publish`. */
export class StagedKeys {
  private readonly kinds: { readonly [K in KindName]: StagedKind };
  /** Whether the last `pk` call assigned a new pk. */
  created = false;

  constructor(cache: KeyCache) {
    const kinds: Partial<Record<KindName, StagedKind>> = {};
    for (const kind of KIND_NAMES) {
      const committed = cache[kind];
      kinds[kind] = {
        committed,
        pks: new Map(),
        opts: new Map(),
        optsEpoch: new Map(),
        raw: new Map(),
        carried: new Map(),
        next: committed.next,
      };
    }
    this.kinds = kinds as { readonly [K in KindName]: StagedKind };
  }

  /** The pk for a natural key; `created` tells whether this fold just assigned it (max + 1). */
  pk(kind: KindName, key: NaturalKey): number {
    const staged = this.kinds[kind];
    const known = staged.committed.pks.get(key) ?? staged.pks.get(key);
    if (known !== undefined) {
      this.created = false;
      return known;
    }
    const pk = staged.next++;
    staged.pks.set(key, pk);
    this.created = true;
    return pk;
  }

  /** True when `row` equals the input row that gave the entity's latest _opts row. */
  rawUnchanged(kind: KindName, pk: number, row: RawRow): boolean {
    const staged = this.kinds[kind];
    if (staged.raw.has(pk)) return false;
    const last = staged.committed.raw.get(pk);
    if (last === undefined || !sameRow(last, row)) return false;
    staged.raw.set(pk, last);
    return true;
  }

  /** Remembers the input row that gave the entity's latest _opts row (after optsChanged). */
  rememberRaw(kind: KindName, pk: number, row: RawRow): void {
    this.kinds[kind].raw.set(pk, row);
  }

  /** True (and remembered) when this fingerprint differs from the entity's latest _opts row. */
  optsChanged(kind: KindName, pk: number, print: string): boolean {
    const staged = this.kinds[kind];
    const latest = staged.opts.get(pk) ?? staged.committed.opts.get(pk);
    if (latest === print) return false;
    staged.opts.set(pk, print);
    return true;
  }

  /** Records that the entity's _opts row of `epoch` was written: the one in force from now on. */
  optsWritten(kind: KindName, pk: number, epoch: DuckDBTimestampTZValue): void {
    this.kinds[kind].optsEpoch.set(pk, epoch);
  }

  /** The epoch of the entity's _opts row in force, this fold's included; undefined when it has none. */
  optsEpoch(kind: KindName, pk: number): DuckDBTimestampTZValue | undefined {
    const staged = this.kinds[kind];
    return staged.optsEpoch.get(pk) ?? staged.committed.optsEpoch.get(pk);
  }

  /** The entity's carried values, this fold's included; undefined before its first row. */
  carried(kind: KindName, pk: number): CarriedValues | undefined {
    const staged = this.kinds[kind];
    return staged.carried.get(pk) ?? staged.committed.carried.get(pk);
  }

  /** Remembers the carried values of the entity's row this fold writes. */
  carry(kind: KindName, pk: number, values: CarriedValues): void {
    this.kinds[kind].carried.set(pk, values);
  }

  /**
   * Call after COMMIT: the staged pks, fingerprints and epochs become the committed state,
   * and the input rows of the entities this fold saw replace those of the last fold of their kind.
   */
  publish(): void {
    for (const kind of KIND_NAMES) {
      const { committed, pks, opts, optsEpoch, raw, carried, next } = this.kinds[kind];
      for (const [key, pk] of pks) committed.pks.set(key, pk);
      for (const [pk, print] of opts) committed.opts.set(pk, print);
      for (const [pk, epoch] of optsEpoch) committed.optsEpoch.set(pk, epoch);
      for (const [pk, values] of carried) committed.carried.set(pk, values);
      // A kind this fold did not see at all (its replies missing) keeps its rows.
      if (raw.size > 0) committed.raw.clear();
      for (const [pk, row] of raw) committed.raw.set(pk, row);
      committed.next = next;
    }
  }
}

/** A row as the fold built it, before conversion: parsed JSON values and values the fold made. */
export type RawRow = Readonly<Record<string, unknown>>;

/**
 * Whether two rows the fold built are the same: the same keys and equal values, arrays and
 * objects compared item by item. Cheaper than any text form of the rows: an unchanged
 * configuration, the common case, is compared without allocating. Key order is not
 * compared: a column takes no object value (it is refused as "an object" whatever its keys'
 * order), so two rows that differ only there give the same _opts row.
 */
export function sameRow(a: RawRow, b: RawRow): boolean {
  let count = 0;
  for (const key in a) {
    if (!sameValue(a[key], b[key])) return false;
    count++;
  }
  for (const key in b) {
    if (!(key in a)) return false;
    count--;
  }
  return count === 0;
}

function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameValue(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(y)) return false;
  return sameRow(x as RawRow, y as RawRow);
}
