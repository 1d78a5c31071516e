/**
 * `natsmon config check` and `natsmon run`, spawned as a user runs them, on files naming
 * settings start-up cannot use: a db.memory-limit DuckDB refuses, a db.threads past the bound,
 * and credentials files that are missing, unreadable, a directory or not credentials. Every
 * problem is printed with its path, and run stops before starting anything.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { newUserCreds } from "../harness/creds-file.ts";
import { runNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";

const lines = (text: string) => text.split("\n").filter((l) => l !== "");
const NOT_A_SIZE =
  '"lots" is not a size: write a number and a unit, such as "4GB", "512MiB" or "1.5GB", or "none" for no limit';

/** A node's file with every kind of file problem and a memory limit DuckDB refuses, and the lines it must print. */
async function badFile(dir: string): Promise<{ file: string; errors: string[] }> {
  const locked = join(dir, "sink.creds");
  await writeFile(locked, "creds");
  await chmod(locked, 0o000);
  const accountDir = join(dir, "app.creds");
  await mkdir(accountDir);
  const seedOnly = join(dir, "ops.creds");
  await writeFile(seedOnly, `${newUserCreds().seed}\n`);
  const file = join(dir, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {data-dir: ${JSON.stringify(join(dir, "data"))}}`,
      `sink: {embedded: {port: -1}, creds: ${locked}}`,
      "system:",
      "  id: prod",
      "  nats:",
      "    url: nats://127.0.0.1:4999",
      "    creds: /nonexistent/sys.creds",
      `    accounts: [{name: APP, creds: ${accountDir}}, {name: OPS, creds: ${seedOnly}}]`,
      "db: {memory-limit: lots}",
      "",
    ].join("\n"),
  );
  return {
    file,
    errors: [
      `db.memory-limit: ${NOT_A_SIZE}`,
      `sink.creds: ${locked} cannot be read: permission denied`,
      "system.nats.creds: /nonexistent/sys.creds does not exist",
      `system.nats.accounts[0].creds: ${accountDir} is a directory, not a file`,
      `system.nats.accounts[1].creds: ${seedOnly} holds a bare NKEY seed, not a credentials file (a user known by its nkey alone is given as nkey: FILE): ` +
        "a NATS credentials file holds the user's JWT and then its NKEY seed, each between " +
        "a -----BEGIN …----- and an ------END …------ line, as nsc writes it",
    ],
  };
}

describe("settings start-up cannot use, as the commands print them", () => {
  test("natsmon config check exits 2 naming the memory limit and every credentials file, each by its path", async () => {
    await using dir = await tempDir();
    const { file, errors } = await badFile(dir.path);
    const r = await runNatsmon(["config", "check", "--config", file], {}, undefined, {
      honourFileModes: true,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [`natsmon: ${file} is invalid:`, ...errors]);
  });

  test("natsmon run refuses the same file before starting anything, with the same lines", async () => {
    await using dir = await tempDir();
    const { file, errors } = await badFile(dir.path);
    const r = await runNatsmon(["run", "--config", file], {}, undefined, { honourFileModes: true });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), ["natsmon: invalid configuration:", ...errors]);
  });

  test("natsmon config check and run refuse a db.threads past 1024 by its path, and warn of one above the cores", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        `node: {id: n, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        "db: {threads: 100000}",
        "systems: [{id: a, db: {threads: 1024}}, {id: b, db: {threads: 2}}]",
        "",
      ].join("\n"),
    );
    // 1024 is above the cores of any machine these tests run on, so it is warned about.
    const cores = availableParallelism();
    const expected = [
      "db.threads: must be 0 (a thread per core) or a whole number of threads from 1 to 1024: DuckDB starts " +
        "every thread when the catalog opens, and that many would only take the machine's process ids and memory",
      `warning: systems[0].db.threads: is 1024, more than the ${cores} cores of this machine: DuckDB starts every ` +
        "thread when the catalog opens, and those beyond the cores only wait for one; 0 gives a thread per core",
    ];
    const check = await runNatsmon(["config", "check", "--config", file]);
    assert.equal(check.code, 2, check.stderr);
    assert.equal(check.stdout, "");
    assert.deepEqual(lines(check.stderr), [`natsmon: ${file} is invalid:`, ...expected]);
    const run = await runNatsmon(["run", "--config", file]);
    assert.equal(run.code, 2, run.stderr);
    assert.deepEqual(lines(run.stderr), ["natsmon: invalid configuration:", ...expected]);
  });

  test("natsmon run refuses a system's db.memory-limit that DuckDB cannot use, naming its path, and starts nothing", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "natsmon.yaml");
    const data = join(dir.path, "data");
    await writeFile(
      file,
      [
        `node: {id: n, data-dir: ${JSON.stringify(data)}}`,
        "sink: {embedded: {port: -1}}",
        "systems: [{id: a, db: {memory-limit: 80%}}, {id: b, db: {memory-limit: 16MB}}]",
        "",
      ].join("\n"),
    );
    const r = await runNatsmon(["run", "--config", file]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [
      "natsmon: invalid configuration:",
      'systems[0].db.memory-limit: "80%": DuckDB takes no percentage for its memory limit; give a size such as "4GB" or "512MiB"',
      'systems[1].db.memory-limit: must be at least 32MB: with "16MB" natsmon\'s catalog would not open ' +
        "(DuckDB runs out of memory creating its tables)",
    ]);
  });
});

describe("the scrape stream's limits, as config check prints them", () => {
  test("natsmon config check refuses a scraper.stream max-bytes that is no size and a max-age under 3 scrape intervals, by path, and warns of a small max-bytes", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "natsmon.yaml");
    await writeFile(
      file,
      [
        `node: {id: n, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        "sink: {embedded: {port: -1}}",
        // 2m is 3 intervals of 40s: allowed where a system inherits it with that interval.
        'scraper: {interval: 40s, stream: {max-age: 2m, max-bytes: "12"}}',
        "systems:",
        "  - {id: a, scraper: {stream: {max-bytes: 5MB}}}",
        "  - {id: b, scraper: {interval: 5s, stream: {max-bytes: 2TiBs}}}",
        "  - {id: c, scraper: {interval: 30s, stream: {max-age: 80s}}}",
        "  - {id: d, scraper: {interval: 50s}}",
        "",
      ].join("\n"),
    );
    const units = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
    const r = await runNatsmon(["config", "check", "--config", file]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [
      `natsmon: ${file} is invalid:`,
      `systems[1].scraper.stream.max-bytes: "2TiBs": "TiBs" is not a unit; use ${units}`,
      `scraper.stream.max-bytes: "12" has no unit: write one, such as "12MB" (units ${units})`,
      "systems[2].scraper.stream.max-age: must be at least 1m and 3 scrape intervals (90000 ms with " +
        "scraper.interval 30000 ms): the scrape stream would drop an epoch's parts before the catalog folds it",
      "scraper.stream.max-age: must be at least 1m and 3 scrape intervals of systems[3] (150000 ms with " +
        "scraper.interval 50000 ms): the scrape stream would drop an epoch's parts before the catalog folds it",
      "warning: systems[0].scraper.stream.max-bytes: is 5000000 bytes, less than 10MB: at about 13 to 21 KB " +
        "per server per scrape (measured on small servers) it holds minutes of scrapes, and a catalog that " +
        "falls behind or restarts for longer finds parts of its epochs dropped",
    ]);
  });
});
