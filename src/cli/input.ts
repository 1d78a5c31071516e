/** What client commands read from the person running them: SQL on stdin, parameters on argv. */

/** Reads all of stdin as UTF-8 (SQL piped or redirected into a command). */
export async function readStdin(): Promise<string> {
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
