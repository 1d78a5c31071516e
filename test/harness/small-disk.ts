import { execFileSync } from "node:child_process";
import { tempDir } from "./temp-dir.ts";

/**
 * A 20 MiB tmpfs mounted on a temporary directory, unmounted (lazily, should something still
 * hold it) and removed on dispose. Mounting needs root, which the tests run as (.ci/run).
 */
export async function smallDisk(): Promise<{ path: string } & AsyncDisposable> {
  const dir = await tempDir("natsmon-disk-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=20m", "tmpfs", dir.path]);
  } catch (err) {
    await dir[Symbol.asyncDispose]();
    throw new Error(`this test mounts a tmpfs and needs root: ${(err as Error).message}`, { cause: err });
  }
  return {
    path: dir.path,
    async [Symbol.asyncDispose]() {
      execFileSync("umount", ["-l", dir.path]);
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** Fills the disk at `file` until it is full (dd stops with "No space left on device"). */
export function fillDisk(file: string): void {
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${file}`, "bs=64k"], { stdio: "ignore" });
  } catch {
    // Full, as meant.
  }
}
