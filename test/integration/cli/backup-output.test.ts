import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { createBackupFile, type BackupFile } from "../../../src/catalog/index.ts";
import { commitBackup, removeTemp, tempPathFor } from "../../../src/cli/backup-output.ts";
import { tempDir } from "../../harness/temp-dir.ts";

/** A finished temporary backup file for `out`, holding one table of three rows. */
async function finishedTemp(out: string): Promise<BackupFile> {
  const file = await createBackupFile(tempPathFor(out, process.pid));
  await file.run("CREATE TABLE main.t AS SELECT range AS i FROM range(3)");
  return file;
}

class Interrupted extends Error {}

test("a committed backup is FILE, complete, and its temporary file is gone", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b.duckdb");
  const file = await finishedTemp(out);
  await commitBackup(file, out, { replace: false, signal: new AbortController().signal });
  assert.deepEqual(await readdir(dir.path), ["b.duckdb"]);
  const instance = await DuckDBInstance.create(out, { access_mode: "READ_ONLY" });
  try {
    const con = await instance.connect();
    assert.deepEqual((await con.runAndReadAll("SELECT count(*)::INTEGER FROM main.t")).getRowsJS(), [[3]]);
    con.closeSync();
  } finally {
    instance.closeSync();
  }
});

test("a signal during the final checkpoint is honoured: FILE is not written, and FILE it would replace stays", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b.duckdb");
  await writeFile(out, "the previous backup");
  const file = await finishedTemp(out);
  const stop = new AbortController();
  const committing = commitBackup(file, out, { replace: true, signal: stop.signal });
  // The checkpoint is under way (commitBackup's first step); the signal arrives now.
  stop.abort(new Interrupted("SIGINT"));
  await assert.rejects(committing, Interrupted);
  assert.equal(await readFile(out, "utf8"), "the previous backup");
  await removeTemp(file.path);
  assert.deepEqual(await readdir(dir.path), ["b.duckdb"]);
});

test("FILE that appeared during the backup is not replaced without --force", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b.duckdb");
  const file = await finishedTemp(out);
  await writeFile(out, "someone else's");
  await assert.rejects(
    commitBackup(file, out, { replace: false, signal: new AbortController().signal }),
    /appeared meanwhile; not replaced/,
  );
  assert.equal(await readFile(out, "utf8"), "someone else's");
});
