/**
 * Run before `npm start` and `npm test`: makes sure a nats-server binary exists, installing
 * Debian's package when running as root, or saying exactly how to get one.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const found = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"].some(
  (dir) => dir !== "" && existsSync(join(dir, "nats-server")),
);
if (!found) {
  const root = process.getuid?.() === 0;
  if (root && existsSync("/usr/bin/apt-get")) {
    process.stdout.write("nats-server is missing: installing Debian's nats-server package (apt-get)…\n");
    execFileSync("apt-get", ["update"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "nats-server"], { stdio: "inherit" });
  } else {
    process.stderr.write(
      "nats-server is missing. Install it with `sudo apt-get install -y nats-server` (Debian/Ubuntu), " +
        "or put a nats-server 2.9+ binary on PATH.\n",
    );
    process.exit(1);
  }
}
