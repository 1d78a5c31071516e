import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temporary directory removed on dispose. */
export async function tempDir(prefix = "natsmon-test-"): Promise<{ path: string } & AsyncDisposable> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}
