/**
 * The bearer token GET /metrics requires when node.metrics-token-file is set. The file is
 * read at each scrape (a few bytes, every 15 s or so), so a rotated token holds from the next
 * scrape on without a restart, as Prometheus reads its `credentials_file` at each scrape. A
 * file that cannot be read or holds no usable token then (being rewritten, say) leaves the
 * last good token in force, with a warning.
 */
import { readFile } from "node:fs/promises";
import { bearerCheck, fileToken, tokenFileProblem, type BearerCheck, type Logger } from "../lib/index.ts";

/** Reads the file once (it must hold a token) and returns what checks each request against it. */
export async function metricsTokenCheck(file: string, log: Logger): Promise<() => Promise<BearerCheck>> {
  const first = await readFile(file, "utf8");
  const problem = tokenFileProblem(first);
  if (problem) throw new Error(`node.metrics-token-file ${file}: ${problem}`);
  let current = { content: first, check: bearerCheck(fileToken(first)) };
  let warned: string | undefined;
  return async () => {
    let content: string;
    try {
      content = await readFile(file, "utf8");
    } catch (err) {
      warnOnce(`cannot be read (${(err as Error).message})`);
      return current.check;
    }
    if (content === current.content) return current.check;
    const unusable = tokenFileProblem(content);
    if (unusable) {
      warnOnce(unusable);
      return current.check;
    }
    warned = undefined;
    current = { content, check: bearerCheck(fileToken(content)) };
    log.info({ file }, "GET /metrics takes the token now in node.metrics-token-file");
    return current.check;
  };

  function warnOnce(why: string) {
    if (warned === why) return;
    warned = why;
    log.warn(
      { file },
      `node.metrics-token-file ${why}; GET /metrics takes the last token read until the file holds one again`,
    );
  }
}
