/**
 * What one fold accumulates before it writes: the rows of every hx table, the pks it
 * assigned and the problems it met. Entity folds (kinds/) call `pk`, `opts` and `stats`;
 * fold-epoch.ts appends everything in one transaction and publishes the keys after COMMIT.
 */
import type { DuckDBConnection, DuckDBTimestampTZValue } from "@duckdb/node-api";
import { fingerprint, optsValues, StagedKeys, type CarriedValues, type KeyCache } from "./key-cache.ts";
import {
  ENTITY_KINDS,
  KIND_NAMES,
  identTable,
  optsTable,
  statsTable,
  type KindName,
} from "./kinds/entity-kinds.ts";
import { RowBuffer, type PlainRow, type TableShapes } from "./table-writer.ts";

/** Each kind's table names, built once (the fold asks for them per entity). */
const TABLES = Object.fromEntries(
  KIND_NAMES.map((kind) => [
    kind,
    { ident: identTable(kind), opts: optsTable(kind), stats: statsTable(kind) },
  ]),
) as Record<KindName, { ident: string; opts: string; stats: string }>;

/** Per kind, the _ident columns `pk` fills itself (the pk, first_epoch), built once. */
const FILLED: Record<KindName, ReadonlySet<string>> = Object.fromEntries(
  KIND_NAMES.map((kind) => [kind, new Set<string>([ENTITY_KINDS[kind].pk, "first_epoch"])]),
) as Record<KindName, Set<string>>;

/** The _stats column naming the epoch of the entity's _opts row in force (hx.connection_stats). */
const OPTS_EPOCH = "opts_epoch";

/** hx.epochs.errors keeps this many messages; the rest are counted. */
const MAX_PROBLEMS = 100;

export class FoldContext {
  readonly epoch: DuckDBTimestampTZValue;
  private readonly shapes: TableShapes;
  private readonly keys: StagedKeys;
  private readonly buffers = new Map<string, RowBuffer>();
  private readonly problemList: string[] = [];
  private droppedProblems = 0;

  constructor(shapes: TableShapes, cache: KeyCache, epoch: DuckDBTimestampTZValue) {
    this.shapes = shapes;
    this.keys = new StagedKeys(cache);
    this.epoch = epoch;
  }

  /** Whether the last `pk` call assigned a new pk (the entity was first seen in this fold). */
  get created(): boolean {
    return this.keys.created;
  }

  /**
   * The stable pk of the entity `ident` names (its natural key, see entity-kinds.ts). On
   * first sight a pk is assigned and the _ident row, stamped with this epoch, is buffered.
   * Undefined when `ident` cannot be stored as an identity (RowBuffer.unfit): the entity is
   * left out of this epoch, with the reason among its problems, and its _opts and _stats
   * calls do nothing.
   */
  pk(kind: KindName, ident: PlainRow, what: string): number | undefined {
    const { pk: pkColumn, keyOf } = ENTITY_KINDS[kind];
    const buffer = this.buffer(TABLES[kind].ident);
    const unfit = buffer.unfit(ident, FILLED[kind]);
    if (unfit !== undefined) {
      this.keys.created = false;
      this.problem(`${what}: ${unfit}; left out of this epoch`);
      return undefined;
    }
    const pk = this.keys.pk(kind, keyOf(ident));
    if (this.keys.created) {
      const row = { ...ident, [pkColumn]: pk, first_epoch: this.epoch };
      buffer.push(
        buffer.convert(row, what, (m) => this.problem(m)),
        what,
        (m) => this.problem(m),
      );
    }
    return pk;
  }

  /** Buffers an _opts row valid from this epoch, only if it differs from the entity's latest. */
  opts(kind: KindName, pk: number | undefined, row: PlainRow, what: string): void {
    if (pk === undefined) return;
    if (this.keys.rawUnchanged(kind, pk, row)) return;
    const pkColumn = ENTITY_KINDS[kind].pk;
    const buffer = this.buffer(TABLES[kind].opts);
    const values = buffer.convert(row, what, (m) => this.problem(m));
    const print = fingerprint(optsValues(buffer.shape.columns, pkColumn, values));
    const changed = this.keys.optsChanged(kind, pk, print);
    this.keys.rememberRaw(kind, pk, row);
    if (!changed) return;
    buffer.set(values, pkColumn, pk);
    buffer.set(values, "epoch", this.epoch);
    if (buffer.push(values, what, (m) => this.problem(m))) this.keys.optsWritten(kind, pk, this.epoch);
  }

  /**
   * Buffers this epoch's _stats row of an entity (none for an entity left out: pk undefined).
   * A _stats table with an `opts_epoch` column gets the epoch of the entity's _opts row in
   * force, so its view joins that row by equality (migration 38); call `opts` first.
   */
  stats(kind: KindName, pk: number | undefined, row: PlainRow, what: string): void {
    if (pk === undefined) return;
    const buffer = this.buffer(TABLES[kind].stats);
    const values = buffer.convert(row, what, (m) => this.problem(m));
    buffer.set(values, ENTITY_KINDS[kind].pk, pk);
    buffer.set(values, "epoch", this.epoch);
    if (buffer.shape.index.has(OPTS_EPOCH))
      buffer.set(values, OPTS_EPOCH, this.keys.optsEpoch(kind, pk) ?? null);
    buffer.push(values, what, (m) => this.problem(m));
  }

  /**
   * The values of the kind's carried _stats columns (EntityKind.carried) in the entity's
   * previous row: what the fold carries forward when this epoch does not renew them.
   */
  carried(kind: KindName, pk: number): CarriedValues | undefined {
    return this.keys.carried(kind, pk);
  }

  /** The carried values of the row this fold writes for the entity, for its next row. */
  carry(kind: KindName, pk: number, values: CarriedValues): void {
    this.keys.carry(kind, pk, values);
  }

  problem(message: string): void {
    if (this.problemList.length < MAX_PROBLEMS) this.problemList.push(message);
    else this.droppedProblems++;
  }

  get problems(): string[] {
    return this.droppedProblems === 0
      ? [...this.problemList]
      : [...this.problemList, `… and ${this.droppedProblems} more problems`];
  }

  buffer(table: string): RowBuffer {
    let buffer = this.buffers.get(table);
    if (!buffer) {
      const shape = this.shapes.get(table);
      if (!shape) throw new Error(`the catalog has no table hx.${table}`);
      this.buffers.set(table, (buffer = new RowBuffer(shape)));
    }
    return buffer;
  }

  /**
   * Sorts each _stats buffer by pk, so that each epoch's rows lie in (epoch, pk) order on
   * disk, and fills the DataChunks of every buffer (RowBuffer.prepare): work that needs no
   * connection, done while the connection is busy with main.ips.
   */
  prepareAll(): void {
    for (const kind of KIND_NAMES) this.buffers.get(statsTable(kind))?.sortBy(ENTITY_KINDS[kind].pk);
    for (const buffer of this.buffers.values()) buffer.prepare();
  }

  /**
   * Appends every buffered row: all _ident tables first (a later kind's ident may name an
   * earlier kind's pk), then _opts and _stats. Returns the number of rows written.
   */
  async appendAll(con: DuckDBConnection): Promise<number> {
    let rows = 0;
    for (const table of KIND_NAMES.map(identTable))
      rows += (await this.buffers.get(table)?.appendTo(con)) ?? 0;
    for (const kind of KIND_NAMES) {
      rows += (await this.buffers.get(optsTable(kind))?.appendTo(con)) ?? 0;
      rows += (await this.buffers.get(statsTable(kind))?.appendTo(con)) ?? 0;
    }
    return rows;
  }

  /** After COMMIT only: the pks and _opts fingerprints of this fold become the committed state. */
  publishKeys(): void {
    this.keys.publish();
  }
}
