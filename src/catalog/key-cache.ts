import type { DuckDBConnection } from "@duckdb/node-api";

/** One entity kind's identities: natural key → pk, and pk → its latest _opts fingerprint. */
export interface KindKeys {
  readonly pks: Map<string, number>;
  readonly opts: Map<number, string>;
  next: number;
}

export interface KeyCache {
  readonly server: KindKeys;
  readonly stream: KindKeys;
  readonly consumer: KindKeys;
}

async function loadKind(
  con: DuckDBConnection,
  identSql: string,
  optsTable: string,
  pk: string,
): Promise<KindKeys> {
  const pks = new Map<string, number>();
  let max = 0;
  for (const [key, value] of (await con.runAndReadAll(identSql)).getRowsJS()) {
    pks.set(typeof key === "string" ? key : JSON.stringify(key), Number(value));
    max = Math.max(max, Number(value));
  }
  // The latest row per pk, rendered as the fold renders it, so a change is a string compare.
  const opts = new Map<number, string>();
  const latest = await con.runAndReadAll(
    `SELECT * EXCLUDE (epoch) FROM ${optsTable} QUALIFY row_number() OVER (PARTITION BY ${pk} ORDER BY epoch DESC) = 1`,
  );
  for (const row of latest.getRowsJS()) {
    opts.set(Number(row[0]), fingerprint(row.slice(1)));
  }
  return { pks, opts, next: max + 1 };
}

/** A stable text form of an _opts row's values (pk and epoch excluded). */
export function fingerprint(values: readonly unknown[]): string {
  // Numbers read back from DuckDB are bigint where the fold had numbers: compare as text.
  return JSON.stringify(values, (_k, v: unknown) =>
    typeof v === "bigint" || typeof v === "number" ? String(v) : v === undefined ? null : v,
  );
}

export async function loadKeyCache(con: DuckDBConnection): Promise<KeyCache> {
  return {
    server: await loadKind(con, "SELECT name, server_pk FROM hx.server_ident", "hx.server_opts", "server_pk"),
    stream: await loadKind(
      con,
      "SELECT account || '/' || name, stream_pk FROM hx.stream_ident",
      "hx.stream_opts",
      "stream_pk",
    ),
    consumer: await loadKind(
      con,
      "SELECT stream_pk || '/' || name, consumer_pk FROM hx.consumer_ident",
      "hx.consumer_opts",
      "consumer_pk",
    ),
  };
}
