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
import { ENTITY_KINDS, KIND_NAMES, identTable, optsTable, type KindName } from "./kinds/entity-kinds.ts";

export interface KindKeys {
  readonly pks: Map<string, number>;
  readonly opts: Map<number, string>;
  /**
   * The fold's input row (rawPrint) that gave each entity's latest _opts fingerprint in this
   * process: an identical row next epoch needs neither conversion nor fingerprint. Not
   * loaded from the file; the first fold after open compares fingerprints.
   */
  readonly raw: Map<number, string>;
  next: number;
}

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
  const pks = new Map<string, number>();
  let max = 0;
  for (const ident of (await con.runAndReadAll(`SELECT * FROM hx.${identTable(kind)}`)).getRowObjectsJS()) {
    const value = Number(ident[pk]);
    pks.set(keyOf(ident), value);
    max = Math.max(max, value);
  }
  const opts = new Map<number, string>();
  const latest = await con.runAndReadAll(
    `SELECT * FROM hx.${optsTable(kind)} QUALIFY row_number() OVER (PARTITION BY ${pk} ORDER BY epoch DESC) = 1`,
  );
  const columns = latest.columnNames();
  const pkIndex = columns.indexOf(pk);
  for (const row of latest.getRows()) {
    opts.set(Number(row[pkIndex]), fingerprint(optsValues(columns, pk, row)));
  }
  return { pks, opts, raw: new Map(), next: max + 1 };
}

export async function loadKeyCache(con: DuckDBConnection): Promise<KeyCache> {
  const entries: [KindName, KindKeys][] = [];
  for (const kind of KIND_NAMES) entries.push([kind, await loadKind(con, kind)]);
  return Object.fromEntries(entries) as KeyCache;
}

/** One fold's additions to the cache, visible to that fold only until `publish`. */
export class StagedKeys {
  private readonly cache: KeyCache;
  private readonly pks = new Map<KindName, Map<string, number>>();
  private readonly opts = new Map<KindName, Map<number, string>>();
  private readonly raw = new Map<KindName, Map<number, string>>();
  private readonly next = new Map<KindName, number>();

  constructor(cache: KeyCache) {
    this.cache = cache;
  }

  /** The pk for a natural key, and whether this fold just assigned it (max + 1). */
  pk(kind: KindName, key: string): { pk: number; created: boolean } {
    const known = this.cache[kind].pks.get(key) ?? this.pks.get(kind)?.get(key);
    if (known !== undefined) return { pk: known, created: false };
    const pk = this.next.get(kind) ?? this.cache[kind].next;
    this.next.set(kind, pk + 1);
    mapOf(this.pks, kind).set(key, pk);
    return { pk, created: true };
  }

  /** True when `raw` is the input row that gave the entity's latest _opts row. */
  rawUnchanged(kind: KindName, pk: number, raw: string): boolean {
    return this.raw.get(kind)?.get(pk) === undefined && this.cache[kind].raw.get(pk) === raw;
  }

  /** Remembers the input row that gave the entity's latest _opts row (after optsChanged). */
  rememberRaw(kind: KindName, pk: number, raw: string): void {
    mapOf(this.raw, kind).set(pk, raw);
  }

  /** True (and remembered) when this fingerprint differs from the entity's latest _opts row. */
  optsChanged(kind: KindName, pk: number, print: string): boolean {
    const latest = this.opts.get(kind)?.get(pk) ?? this.cache[kind].opts.get(pk);
    if (latest === print) return false;
    mapOf(this.opts, kind).set(pk, print);
    return true;
  }

  /** Call after COMMIT: the staged pks and fingerprints become the committed state. */
  publish(): void {
    for (const kind of KIND_NAMES) {
      const target = this.cache[kind];
      for (const [key, pk] of this.pks.get(kind) ?? []) target.pks.set(key, pk);
      for (const [pk, print] of this.opts.get(kind) ?? []) target.opts.set(pk, print);
      for (const [pk, raw] of this.raw.get(kind) ?? []) target.raw.set(pk, raw);
      target.next = this.next.get(kind) ?? target.next;
    }
  }
}

function mapOf<K, V>(maps: Map<KindName, Map<K, V>>, kind: KindName): Map<K, V> {
  let map = maps.get(kind);
  if (!map) maps.set(kind, (map = new Map<K, V>()));
  return map;
}

/**
 * A text form of a row as the fold built it (before conversion), equal for equal rows. Rows
 * of one kind come from one object literal, so their keys are always in the same order.
 */
export function rawPrint(row: Readonly<Record<string, unknown>>): string {
  let text = "";
  for (const key in row) {
    const value = row[key];
    text += key;
    text += "\u0001";
    if (Array.isArray(value)) {
      for (const item of value as unknown[]) {
        text += typeof item === "object" && item !== null ? JSON.stringify(item, bigintSafe) : String(item);
        text += "\u0002";
      }
    } else if (typeof value === "object" && value !== null) {
      text += JSON.stringify(value, bigintSafe);
    } else {
      text += typeof value === "string" ? `s${value}` : String(value);
    }
    text += "\u0001";
  }
  return text;
}

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? `${value}n` : value;
}
