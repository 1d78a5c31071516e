/**
 * Test input for checks: catalogs holding fixture epochs (lab replies, edited), with the
 * helper and check macros installed, and ways to run one check over them.
 *
 * A migrated catalog file with the macros is built once per process and copied for each
 * catalog a test asks for, so a fixture costs a file copy and its folds.
 */
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import {
  foldEpoch,
  installCheckMacros,
  openCatalog,
  type Catalog,
  type ScrapeReply,
} from "../../../src/catalog/index.ts";
import { CHECKS, HELPER_MACROS, checkMacroSql, macroName, type Check } from "../../../src/checks/index.ts";
import type { CommitMarker } from "../../../src/protocol/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { marker, TEST_DB } from "../catalog/lab-epoch.ts";

/**
 * One epoch of a fixture: its replies, and optionally marker fields to override
 * (servers_expected, …) and its time (RFC 3339, after the epoch before; live tests pass when
 * they scraped it, where the time between epochs matters).
 */
export type FixtureEpoch =
  | readonly ScrapeReply[]
  | {
      readonly replies: readonly ScrapeReply[];
      readonly marker?: Partial<CommitMarker>;
      readonly at?: string;
    };

/**
 * A check's fixture: epochs folded in order (10 s apart unless timed); the check runs over the last one.
 * `fires` must make it return at least one row (for each entity named in `firesFor`, when
 * given); `passes` must make it return none.
 */
export interface CheckFixture {
  readonly fires: () => FixtureEpoch[];
  readonly passes: () => FixtureEpoch[];
  readonly firesFor?: readonly string[];
  /** Thresholds to run with instead of the defaults, in both cases. */
  readonly params?: Readonly<Record<string, number>>;
}

/** Epoch `i` of a fixture: 2026-01-01T00:00:00Z plus 10 s per epoch. */
export function fixtureEpochTime(i: number): string {
  return new Date(Date.UTC(2026, 0, 1) + i * 10_000).toISOString();
}

let template: Promise<string> | undefined;

async function templateFile(): Promise<string> {
  template ??= (async () => {
    const dir = await tempDir("natsmon-checks-template-");
    const path = join(dir.path, "template.duckdb");
    const catalog = await openCatalog({ path, db: TEST_DB });
    try {
      await installCheckMacros(catalog, [...HELPER_MACROS, ...CHECKS.map(checkMacroSql)]);
    } finally {
      await catalog[Symbol.asyncDispose]();
    }
    return path;
  })();
  return template;
}

/** A catalog with the macros installed and `epochs` folded; `epochs` (RFC 3339) names them in order. */
export async function catalogWith(
  epochs: readonly FixtureEpoch[],
): Promise<{ catalog: Catalog; epochs: string[] } & AsyncDisposable> {
  const dir = await tempDir("natsmon-checks-");
  const path = join(dir.path, "lab.duckdb");
  await copyFile(await templateFile(), path);
  const catalog = await openCatalog({ path, db: TEST_DB });
  const names: string[] = [];
  try {
    for (const [i, e] of epochs.entries()) {
      const replies = "replies" in e ? e.replies : e;
      const overrides = "replies" in e ? (e.marker ?? {}) : {};
      const epoch = ("replies" in e ? e.at : undefined) ?? fixtureEpochTime(i);
      const result = await foldEpoch(catalog, {
        markerSeq: i + 1,
        marker: marker(epoch, replies, overrides),
        replies,
      });
      if (result.status !== "folded") throw new Error(`fixture epoch ${i} was not folded: ${result.reason}`);
      names.push(epoch);
    }
  } catch (err) {
    await catalog[Symbol.asyncDispose]();
    await dir[Symbol.asyncDispose]();
    throw err;
  }
  return {
    catalog,
    epochs: names,
    async [Symbol.asyncDispose]() {
      // The file is removed next: writing its WAL into it at close (most of a close's time) is for nothing.
      await catalog
        .withWriter(({ con }) => con.run("PRAGMA disable_checkpoint_on_shutdown"))
        .catch(() => undefined);
      await catalog[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * The rows of a check's macro over one epoch, or over [`from`, `epoch`] when `from` is given
 * (all columns, plain JS values).
 */
export async function runCheck(
  catalog: Catalog,
  check: Check,
  epoch: string,
  params: Readonly<Record<string, number>> = {},
  from: string = epoch,
): Promise<Record<string, unknown>[]> {
  const named = Object.entries(params).map(([k, v]) => `, ${k} := ${v}`);
  return catalog.withReader(async (con) =>
    (
      await con.runAndReadAll(
        `SELECT * FROM ${macroName(check.code)}($1::TIMESTAMPTZ, $2::TIMESTAMPTZ${named.join("")})`,
        [from, epoch],
      )
    ).getRowObjectsJS(),
  );
}

/**
 * Folds a fixture's epochs and runs the check as natsmon does: an operational check over the
 * last epoch, an optimization check over the window from the first epoch to the last.
 */
export async function runFixture(
  check: Check,
  epochs: readonly FixtureEpoch[],
  params: Readonly<Record<string, number>> = {},
): Promise<Record<string, unknown>[]> {
  await using fixture = await catalogWith(epochs);
  const last = fixture.epochs.at(-1)!;
  return await runCheck(fixture.catalog, check, last, params, check.optimization ? fixture.epochs[0]! : last);
}

/** The names and types of a macro's result columns, as DESCRIBE prints them. */
export async function macroColumns(
  catalog: Catalog,
  check: Check,
): Promise<{ name: string; type: string }[]> {
  return catalog.withReader(async (con) => {
    const reader = await con.runAndReadAll(`DESCRIBE SELECT * FROM ${macroName(check.code)}(now(), now())`);
    return reader
      .getRowObjectsJS()
      .map((r) => ({ name: r.column_name as string, type: r.column_type as string }));
  });
}
