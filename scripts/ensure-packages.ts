/**
 * Run before `npm start` and `npm test`: makes sure the programs they need exist, installing
 * Debian's packages when running as root, or saying exactly how to get them.
 *   node scripts/ensure-packages.ts nats-server prometheus-alertmanager promtool=prometheus
 * Each argument is a binary, optionally `=` the Debian package that ships it.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const DIRS = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"];
const wanted = process.argv.slice(2).map((arg) => {
  const [binary = arg, pkg = binary] = arg.split("=");
  return { binary, pkg };
});
const missing = wanted.filter(
  ({ binary }) => !DIRS.some((dir) => dir !== "" && existsSync(join(dir, binary))),
);
if (missing.length > 0) {
  const packages = [...new Set(missing.map((m) => m.pkg))];
  const root = process.getuid?.() === 0;
  if (root && existsSync("/usr/bin/apt-get")) {
    process.stdout.write(
      `${missing.map((m) => m.binary).join(", ")} missing: installing Debian's ${packages.join(", ")} (apt-get)…\n`,
    );
    execFileSync("apt-get", ["update"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", ...packages], { stdio: "inherit" });
  } else {
    process.stderr.write(
      `${missing.map((m) => m.binary).join(", ")} missing. Install with \`sudo apt-get install -y ${packages.join(" ")}\` ` +
        "(Debian/Ubuntu); nats-server may also be any 2.9+ binary on PATH.\n",
    );
    process.exit(1);
  }
}
