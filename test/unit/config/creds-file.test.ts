/**
 * The content of a credentials file, as the NATS client reads it: a file nsc writes is
 * accepted, and one the client could not connect with is refused by its path, saying what
 * is wrong without quoting the secret. test/integration/bus/creds-file.test.ts holds the
 * same files against a real server.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadConfig } from "../../../src/config/index.ts";
import { brokenCreds, newUserCreds } from "../../harness/creds-file.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const LAYOUT =
  "a NATS credentials file holds the user's JWT and then its NKEY seed, each between " +
  "a -----BEGIN …----- and an ------END …------ line, as nsc writes it";
const creds = newUserCreds();
const { jwt, seed, text } = creds;
const NO_SEED = "holds no NKEY seed the NATS client can use in its second block";

/** What system.nats.creds is refused with, after the file's name, for each broken file. */
const REFUSED: Record<string, string> = {
  empty: `is empty: ${LAYOUT}`,
  blank: `is empty: ${LAYOUT}`,
  "a bare JWT": `holds a bare JWT, not a credentials file: ${LAYOUT}`,
  "a bare seed": `holds a bare NKEY seed, not a credentials file (a user known by its nkey alone is given as nkey: FILE): ${LAYOUT}`,
  garbage: `is not a NATS credentials file, having no JWT block and no NKEY seed block: ${LAYOUT}`,
  "the JWT block only": `has no NKEY seed block after its JWT block: ${LAYOUT}`,
  "the seed block only": `has no JWT block before its NKEY seed block: ${LAYOUT}`,
  "the blocks swapped": `has its NKEY seed block before its JWT block, and the NATS client reads the first block as the JWT: ${LAYOUT}`,
  "a seed with a wrong checksum": `${NO_SEED} (nkeys: invalid checksum): ${LAYOUT}`,
  "a seed with a character base32 has not": `${NO_SEED} (nkeys: invalid encoded key): ${LAYOUT}`,
  "Windows line endings":
    "has Windows (CRLF) line endings, which the NATS client cannot read: convert it to LF line endings",
  "no line break after the seed block's END line":
    "has a JWT and an NKEY seed block that the NATS client cannot read: each needs its -----BEGIN …----- line, " +
    "its value on one line, and its ------END …------ line ended by a line break",
};
const BROKEN = brokenCreds(creds);

/** system.nats.creds naming a file of `content`: "ok", or each error as `path: message`. */
async function check(content: string): Promise<{ file: string; then: string[] | "ok" }> {
  await using dir = await tempDir();
  const file = join(dir.path, "sys.creds");
  await writeFile(file, content);
  const result = await loadConfig({
    env: {
      NATSMON_SYSTEM_ID: "prod",
      NATSMON_SYSTEM_NATS_URL: "nats://a:4222",
      NATSMON_SYSTEM_NATS_CREDS: file,
    },
  });
  return { file, then: result.ok ? "ok" : result.errors.map((e) => `${e.path}: ${e.message}`) };
}

describe("the content of a credentials file", () => {
  test("given a creds file as nsc writes it, then it is accepted", async () => {
    assert.equal((await check(text)).then, "ok");
  });

  test("given nsc's file with its lines indented or comments around it, then it is accepted, as the client reads it", async () => {
    assert.equal((await check(`# for prod\n${text.replaceAll("\n", "\n  ")}\n# end\n`)).then, "ok");
  });

  test("every broken file of the harness has its expected refusal", () => {
    assert.deepEqual(Object.keys(BROKEN).sort(), Object.keys(REFUSED).sort());
  });

  for (const [name, content] of Object.entries(BROKEN)) {
    const then = REFUSED[name] ?? "";
    test(`given ${name}, then system.nats.creds is refused: ${then}`, async () => {
      const r = await check(content);
      assert.deepEqual(r.then, [`system.nats.creds: ${r.file} ${then}`]);
    });
  }

  test("never quotes the JWT or the seed, nor a part of them", async () => {
    for (const content of Object.values(BROKEN)) {
      const r = await check(content);
      const message = JSON.stringify(r.then);
      for (const secret of [jwt, seed]) {
        for (let i = 0; i + 8 <= secret.length; i += 4) {
          assert.ok(!message.includes(secret.slice(i, i + 8)), `${message} quotes ${secret.slice(0, 4)}…`);
        }
      }
    }
  });

  test("given every creds setting holding a broken file, then each is refused by its own path", async () => {
    await using dir = await tempDir();
    const files = ["sink", "sys", "app", "b"].map((n) => join(dir.path, `${n}.creds`));
    for (const f of files) await writeFile(f, `${seed}\n`);
    const yaml = join(dir.path, "natsmon.yaml");
    await writeFile(
      yaml,
      [
        "node: {id: n}",
        `sink: {url: "nats://s:4222", creds: ${files[0]}}`,
        "systems:",
        `  - {id: a, nats: {url: "nats://a:4222", creds: ${files[1]}, accounts: [{name: APP, creds: ${files[2]}}]}}`,
        `  - {id: b, nats: {url: "nats://b:4222", creds: ${files[3]}}}`,
        "",
      ].join("\n"),
    );
    const result = await loadConfig({ file: yaml });
    assert.equal(result.ok, false);
    const bare = `holds a bare NKEY seed, not a credentials file (a user known by its nkey alone is given as nkey: FILE): ${LAYOUT}`;
    assert.deepEqual(result.ok ? [] : result.errors.map((e) => `${e.path}: ${e.message}`), [
      `sink.creds: ${files[0]} ${bare}`,
      `systems[0].nats.creds: ${files[1]} ${bare}`,
      `systems[0].nats.accounts[0].creds: ${files[2]} ${bare}`,
      `systems[1].nats.creds: ${files[3]} ${bare}`,
    ]);
  });
});
