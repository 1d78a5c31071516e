import assert from "node:assert/strict";
import { runNatsmon } from "./natsmon-process.ts";

/**
 * Runs `natsmon config check` and `natsmon run` on a configuration file start-up must refuse:
 * each exits 2 printing every one of `errors` as a line of its own. Returns what each printed
 * on stderr, for further checks.
 */
export async function refusedAtStart(file: string, errors: readonly string[]): Promise<string[]> {
  const printed: string[] = [];
  for (const args of [
    ["config", "check", "--config", file],
    ["run", "--config", file],
  ]) {
    const r = await runNatsmon(args);
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    const lines = r.stderr.split("\n").map((l) => l.trim());
    for (const error of errors) assert.ok(lines.includes(error), `${args[0]} prints ${error}:\n${r.stderr}`);
    printed.push(r.stderr);
  }
  return printed;
}
