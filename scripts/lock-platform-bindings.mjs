// The npm registry mirror on these machines carries only the Linux x64 builds of native
// packages, so `npm install` leaves other platforms' optional packages (DuckDB bindings,
// the ESLint resolver) out of package-lock.json, and `npm ci` then reports the lockfile
// out of sync. This adds each missing one back as an optional entry gated by os/cpu
// (read from the package's platform suffix), which npm ci skips on other platforms.
// Run after `npm install` changes the lockfile: node scripts/lock-platform-bindings.mjs
import { readFileSync, writeFileSync } from "node:fs";

const OS = [
  "android",
  "darwin",
  "freebsd",
  "linux",
  "win32",
  "openharmony",
  "netbsd",
  "openbsd",
  "sunos",
  "aix",
];
const CPU = ["arm", "arm64", "ia32", "x64", "ppc64", "riscv64", "s390x", "loong64", "wasm32", "mips64el"];

function platformOf(name) {
  const tokens = name.split("/").pop().split("-");
  for (let i = 0; i < tokens.length - 1; i++) {
    if (tokens[i] === "wasm32") return { os: [], cpu: ["wasm32"] };
    if (OS.includes(tokens[i]) && CPU.includes(tokens[i + 1])) {
      const libc = tokens.includes("musl") ? ["musl"] : tokens.includes("gnu") ? ["glibc"] : undefined;
      return { os: [tokens[i]], cpu: [tokens[i + 1]], ...(libc ? { libc } : {}) };
    }
  }
  return undefined;
}

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    const platform = platformOf(name);
    if (!platform) throw new Error(`cannot tell the platform of ${name}`);
    lock.packages[key] = {
      version: version.replace(/^[\^~=]/, ""),
      ...(platform.cpu.length ? { cpu: platform.cpu } : {}),
      optional: true,
      ...(platform.os.length ? { os: platform.os } : {}),
      ...(platform.libc ? { libc: platform.libc } : {}),
    };
    added++;
  }
}
const entries = Object.entries(lock.packages).sort(([a], [b]) =>
  a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
);
lock.packages = Object.fromEntries(entries);
writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");
console.log(`added ${added} platform entries`);
