/**
 * Arrow column data → DuckDB values for the Appender, exactly: the inverse of the
 * DuckDB → Arrow mapping of the chunk protocol. Values are read from the Arrow buffers,
 * not through `Vector.get`, where `get` would lose precision (timestamps come back as
 * float milliseconds; decimals as word arrays).
 *
 * Buffers of a sliced Arrow `Data` follow apache-arrow's rule: fixed-width values and
 * offsets are sliced (index from 0), validity and boolean bitmaps are not (add `offset`),
 * and a variable-width child is never sliced (offsets index it directly).
 */
import {
  DuckDBTypeId,
  blobValue,
  dateValue,
  decimalValue,
  listValue,
  structValue,
  timeValue,
  timestampTZValue,
  timestampValue,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import { DateUnit, Precision, TimeUnit, Type, type Data, type DataType } from "apache-arrow";

/**
 * The byte width of a column whose Arrow values have DuckDB's layout byte for byte (little-
 * endian integers and floats, microsecond timestamps, day dates, 128-bit HUGEINT), so they can
 * be copied into a DuckDB vector as they are; undefined for every other pair.
 */
export function sameLayoutWidth(arrow: DataType, duck: DuckDBType): number | undefined {
  const a = arrow as DataType & {
    bitWidth?: number;
    isSigned?: boolean;
    unit?: number;
    precision?: number;
    scale?: number;
  };
  const layout = SAME_LAYOUT[duck.typeId];
  if (!layout || arrow.typeId !== layout.arrow) return undefined;
  const matches =
    (layout.bitWidth === undefined || a.bitWidth === layout.bitWidth) &&
    (layout.isSigned === undefined || a.isSigned === layout.isSigned) &&
    (layout.unit === undefined || a.unit === layout.unit) &&
    (layout.precision === undefined || a.precision === layout.precision) &&
    (layout.scale === undefined || a.scale === layout.scale);
  return matches ? layout.width : undefined;
}

interface Layout {
  readonly width: number;
  readonly arrow: Type;
  readonly bitWidth?: number;
  readonly isSigned?: boolean;
  readonly unit?: number;
  readonly precision?: Precision;
  readonly scale?: number;
}

const int = (bits: number, isSigned: boolean): Layout => ({
  width: bits / 8,
  arrow: Type.Int,
  bitWidth: bits,
  isSigned,
});
const micros: Layout = { width: 8, arrow: Type.Timestamp, unit: TimeUnit.MICROSECOND };

const SAME_LAYOUT: Partial<Record<DuckDBTypeId, Layout>> = {
  [DuckDBTypeId.TINYINT]: int(8, true),
  [DuckDBTypeId.SMALLINT]: int(16, true),
  [DuckDBTypeId.INTEGER]: int(32, true),
  [DuckDBTypeId.BIGINT]: int(64, true),
  [DuckDBTypeId.UTINYINT]: int(8, false),
  [DuckDBTypeId.USMALLINT]: int(16, false),
  [DuckDBTypeId.UINTEGER]: int(32, false),
  [DuckDBTypeId.UBIGINT]: int(64, false),
  [DuckDBTypeId.FLOAT]: { width: 4, arrow: Type.Float, precision: Precision.SINGLE },
  [DuckDBTypeId.DOUBLE]: { width: 8, arrow: Type.Float, precision: Precision.DOUBLE },
  [DuckDBTypeId.TIMESTAMP]: micros,
  [DuckDBTypeId.TIMESTAMP_TZ]: micros,
  [DuckDBTypeId.DATE]: { width: 4, arrow: Type.Date, unit: DateUnit.DAY },
  // Both 128-bit two's complement, little-endian (DuckDB: the lower u64, then the upper i64).
  [DuckDBTypeId.HUGEINT]: { width: 16, arrow: Type.Decimal, bitWidth: 128, scale: 0 },
};

/** Reads row `i` of an Arrow column as a DuckDB value; validity is checked by the caller. */
export type ValueReader = (data: Data, i: number) => DuckDBValue;

/** Whether row `i` of `data` is not NULL. */
export function isValidAt(data: Data, i: number): boolean {
  if (data.typeId === Type.Null) return false;
  if (data.nullCount === 0) return true;
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0) return true;
  const j = data.offset + i;
  return ((bitmap[j >> 3]! >> (j & 7)) & 1) === 1;
}

/**
 * A reader turning values of Arrow type `arrow` into values of DuckDB type `duck`. Throws
 * (naming both types) for a pair the backup cannot copy without loss.
 */
export function readerFor(arrow: DataType, duck: DuckDBType, column: string): ValueReader {
  const unsupported = () =>
    new Error(`column ${column}: cannot copy Arrow ${Type[arrow.typeId]} into DuckDB ${duck.toString()}`);
  const id = duck.typeId;
  switch (id) {
    case DuckDBTypeId.BOOLEAN:
      if (arrow.typeId !== Type.Bool) throw unsupported();
      return (data, i) => {
        const j = data.offset + i;
        return (((data.values as Uint8Array)[j >> 3]! >> (j & 7)) & 1) === 1;
      };
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      if (arrow.typeId !== Type.Int && arrow.typeId !== Type.Float) throw unsupported();
      return (data, i) => Number((data.values as ArrayLike<number | bigint>)[i]);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      if (arrow.typeId === Type.Int)
        return (data, i) => BigInt((data.values as ArrayLike<number | bigint>)[i]!);
      if (arrow.typeId === Type.Decimal) return (data, i) => decimalWords(data, i);
      throw unsupported();
    case DuckDBTypeId.DECIMAL: {
      if (arrow.typeId !== Type.Decimal) throw unsupported();
      const { width, scale } = duck as DuckDBType & { width: number; scale: number };
      return (data, i) => decimalValue(decimalWords(data, i), width, scale);
    }
    case DuckDBTypeId.VARCHAR:
      if (arrow.typeId !== Type.Utf8 && arrow.typeId !== Type.LargeUtf8) throw unsupported();
      return (data, i) => UTF8.decode(bytesAt(data, i));
    case DuckDBTypeId.BLOB:
      if (arrow.typeId !== Type.Binary && arrow.typeId !== Type.LargeBinary) throw unsupported();
      return (data, i) => blobValue(bytesAt(data, i).slice());
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ: {
      if (arrow.typeId !== Type.Timestamp) throw unsupported();
      const toMicros = microsFrom((arrow as DataType & { unit: TimeUnit }).unit);
      const make = id === DuckDBTypeId.TIMESTAMP_TZ ? timestampTZValue : timestampValue;
      return (data, i) => make(toMicros(BigInt((data.values as ArrayLike<number | bigint>)[i]!)));
    }
    case DuckDBTypeId.DATE: {
      if (arrow.typeId !== Type.Date) throw unsupported();
      const millis = (arrow as DataType & { unit: number }).unit === 1;
      return (data, i) => {
        const raw = Number((data.values as ArrayLike<number | bigint>)[i]);
        return dateValue(millis ? Math.floor(raw / 86_400_000) : raw);
      };
    }
    case DuckDBTypeId.TIME: {
      if (arrow.typeId !== Type.Time) throw unsupported();
      const toMicros = microsFrom((arrow as DataType & { unit: TimeUnit }).unit);
      return (data, i) => timeValue(toMicros(BigInt((data.values as ArrayLike<number | bigint>)[i]!)));
    }
    case DuckDBTypeId.LIST: {
      if (arrow.typeId !== Type.List && arrow.typeId !== Type.LargeList) throw unsupported();
      const childType = childTypes(arrow)[0]!;
      const item = readerFor(childType, (duck as DuckDBType & { valueType: DuckDBType }).valueType, column);
      return (data, i) => {
        const offsets = data.valueOffsets as ArrayLike<number | bigint>;
        const child = data.children[0]!;
        const items: DuckDBValue[] = [];
        for (let j = Number(offsets[i]); j < Number(offsets[i + 1]); j++) {
          items.push(isValidAt(child, j) ? item(child, j) : null);
        }
        return listValue(items);
      };
    }
    case DuckDBTypeId.STRUCT: {
      if (arrow.typeId !== Type.Struct) throw unsupported();
      const duckEntries = (duck as DuckDBType & { entryNames: string[]; entryTypes: DuckDBType[] })
        .entryNames;
      const duckTypes = (duck as DuckDBType & { entryTypes: DuckDBType[] }).entryTypes;
      const fields = childTypes(arrow);
      if (fields.length !== duckEntries.length) throw unsupported();
      const readers = fields.map((t, k) => readerFor(t, duckTypes[k]!, `${column}.${duckEntries[k]}`));
      return (data, i) => {
        const entries: Record<string, DuckDBValue> = {};
        duckEntries.forEach((name, k) => {
          // Struct children are sliced with their parent, so they share its offset.
          const child = data.children[k]!;
          entries[name] = isValidAt(child, i) ? readers[k]!(child, i) : null;
        });
        return structValue(entries);
      };
    }
    case DuckDBTypeId.ANY:
    case DuckDBTypeId.ARRAY:
    case DuckDBTypeId.BIGNUM:
    case DuckDBTypeId.BIT:
    case DuckDBTypeId.ENUM:
    case DuckDBTypeId.GEOMETRY:
    case DuckDBTypeId.INTEGER_LITERAL:
    case DuckDBTypeId.INTERVAL:
    case DuckDBTypeId.MAP:
    case DuckDBTypeId.SQLNULL:
    case DuckDBTypeId.STRING_LITERAL:
    case DuckDBTypeId.TIME_NS:
    case DuckDBTypeId.TIME_TZ:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.UNION:
    case DuckDBTypeId.UUID:
    case DuckDBTypeId.VARIANT:
      // Not in the catalog's schema; refused rather than copied approximately.
      throw unsupported();
  }
}

/** The child types of a nested Arrow type (List, Struct). */
function childTypes(arrow: DataType): DataType[] {
  return (arrow.children as { type: DataType }[]).map((f) => f.type);
}

const UTF8 = new TextDecoder();

/** The bytes of a variable-width value (Utf8, Binary and their Large forms). */
function bytesAt(data: Data, i: number): Uint8Array {
  const offsets = data.valueOffsets as ArrayLike<number | bigint>;
  return (data.values as Uint8Array).subarray(Number(offsets[i]), Number(offsets[i + 1]));
}

/** A two's-complement Arrow decimal (128 or 256 bits, little-endian 32-bit words) as a bigint. */
function decimalWords(data: Data, i: number): bigint {
  const words = data.values as Uint32Array;
  const stride = (data.type as DataType & { bitWidth: number }).bitWidth / 32;
  let value = 0n;
  for (let k = stride - 1; k >= 0; k--) value = (value << 32n) | BigInt(words[i * stride + k]!);
  const bits = BigInt(stride * 32);
  return value >= 1n << (bits - 1n) ? value - (1n << bits) : value;
}

function microsFrom(unit: TimeUnit): (value: bigint) => bigint {
  switch (unit) {
    case TimeUnit.SECOND:
      return (v) => v * 1_000_000n;
    case TimeUnit.MILLISECOND:
      return (v) => v * 1000n;
    case TimeUnit.MICROSECOND:
      return (v) => v;
    case TimeUnit.NANOSECOND:
      // DuckDB keeps microseconds; floor like DuckDB's own cast.
      return (v) => (v >= 0n ? v / 1000n : -((-v + 999n) / 1000n));
  }
}
