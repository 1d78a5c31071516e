/** What client commands read from the person running them: SQL on stdin, parameters on argv. */
import { fail } from "./client.ts";

/** Where a statement can come from, said in every message that finds none. */
const HOW_TO_PASS_SQL =
  "pass the statement as an argument, or pipe it in on stdin (no argument or `-` reads stdin)";

/**
 * The SQL of `natsmon query` and `natsmon db explain`: the argument, or stdin for `-` or no
 * argument. With no argument and stdin a terminal, or a statement that is only whitespace,
 * it fails as a usage error (exit 2) and answers undefined, before anything is sent.
 */
export async function readSql(arg: string | undefined): Promise<string | undefined> {
  if (arg === undefined && process.stdin.isTTY) {
    // Reading a terminal would wait silently for input the person does not know is wanted.
    fail(`no SQL given: ${HOW_TO_PASS_SQL}`, 2);
    return undefined;
  }
  const sql = arg === undefined || arg === "-" ? await readStdin() : arg;
  if (sql.trim() === "") {
    fail(`the SQL statement is empty: ${HOW_TO_PASS_SQL}`, 2);
    return undefined;
  }
  return sql;
}

/** Reads all of stdin as UTF-8 (SQL piped or redirected into a command). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * One `--param` value: JSON when it parses (numbers, booleans, null, quoted strings), else
 * the text itself, so `-p prod` and `-p '"prod"'` both bind the string.
 */
export function parseParam(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
