import { z } from "zod";

/**
 * What survives of a value that failed its schema: every object key, array element and
 * record entry that passes on its own, parsed (durations in ms), the rest left out. Arrays
 * keep their length, with a hole where an element failed, so an issue found in the
 * salvaged value names the same path as in the file.
 */
export type Salvaged<T> = T extends readonly (infer E)[]
  ? (Salvaged<E> | undefined)[]
  : T extends object
    ? { [K in keyof T]?: Salvaged<T[K]> }
    : T;

/**
 * Salvages `value` against `schema`, so that the checks made after the schema (endpoints,
 * check codes, system ids) can run on every part of the file that is valid, even when
 * another part is not. Undefined when nothing of the value passes.
 */
export function salvage<T>(schema: z.ZodType<T>, value: unknown): Salvaged<T> | undefined {
  return salvageAny(schema, value) as Salvaged<T> | undefined;
}

function salvageAny(schema: z.ZodType, value: unknown): unknown {
  const whole = schema.safeParse(value);
  if (whole.success) return whole.data;
  if (schema instanceof z.ZodOptional) return salvageAny(schema.unwrap() as z.ZodType, value);
  if (schema instanceof z.ZodArray) {
    if (!Array.isArray(value)) return undefined;
    return value.map((item: unknown) => salvageAny(schema.element as z.ZodType, item));
  }
  if (!isMapping(value)) return undefined;
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    return keep(Object.keys(shape).map((key) => [key, salvageAny(shape[key]!, value[key])]));
  }
  if (schema instanceof z.ZodRecord) {
    const values = schema.valueType as z.ZodType;
    return keep(Object.entries(value).map(([key, v]) => [key, salvageAny(values, v)]));
  }
  return undefined;
}

function keep(entries: [string, unknown][]): Record<string, unknown> {
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined));
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
