/** What client commands read from the person running them: SQL on stdin, parameters on argv. */
import { parseJsonExact } from "../lib/index.ts";
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
 * The `--param` values of `natsmon query` and `natsmon db explain`: each one JSON when it
 * parses (numbers, booleans, null, quoted strings), else the text itself, so `-p prod` and
 * `-p '"prod"'` both bind the string. An integer beyond 2^53 keeps every digit (a bigint,
 * sent as the same literal). A number no double holds (`1e400`) fails as a usage error
 * (exit 2), answering undefined, before anything is sent: it would otherwise go out as
 * null (JSON has no Infinity).
 */
export function parseParams(
  values: readonly string[] | undefined,
): { params: unknown[] | undefined } | undefined {
  if (values === undefined) return { params: undefined };
  const params = values.map(parseParam);
  const bad = params.findIndex((p) => typeof p === "number" && !Number.isFinite(p));
  if (bad >= 0) {
    fail(`-p ${values[bad]}: the number is beyond a double's range; quote it to pass the text`, 2);
    return undefined;
  }
  return { params };
}

/** One `--param` value: JSON when it parses, else the text itself. */
export function parseParam(value: string): unknown {
  try {
    return parseJsonExact(value);
  } catch {
    return value;
  }
}
