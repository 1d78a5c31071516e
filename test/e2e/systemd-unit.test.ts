/**
 * deploy/systemd/natsmon.service. No systemd runs here, so the unit is checked as far as can be
 * without one: `systemd-analyze verify` accepts it without a warning (with the checkout where
 * the unit expects /opt/natsmon), and its ExecStart, run as the unit runs it (its working
 * directory and environment, a configuration where it names /etc/natsmon), starts a node that
 * SIGTERM alone stops cleanly, embedded nats-server included (KillMode=mixed), while an invalid
 * configuration exits 2, the status the unit does not restart.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const UNIT = join(REPO_ROOT, "deploy/systemd/natsmon.service");
const CHECKOUT = REPO_ROOT.replace(/\/$/, "");

/** The unit's [Service] settings, a list per key (Environment may repeat). */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const line of text.split("\n")) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) section = header[1]!;
    const entry = /^(\w+)=(.*)$/.exec(line);
    if (section === "Service" && entry)
      settings.set(entry[1]!, [...(settings.get(entry[1]!) ?? []), entry[2]!]);
  }
  return settings;
}

test("systemd-analyze verify accepts the unit without a warning", async () => {
  await using dir = await tempDir();
  const unit = join(dir.path, "natsmon.service");
  await writeFile(unit, (await readFile(UNIT, "utf8")).replaceAll("/opt/natsmon", CHECKOUT));
  const r = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr + r.stdout, "", "no warning");
});

test("the unit's ExecStart starts a node that SIGTERM alone stops with its embedded server; a bad configuration exits 2", async () => {
  await using dir = await tempDir();
  const settings = serviceSettings(await readFile(UNIT, "utf8"));
  assert.deepEqual(settings.get("KillMode"), ["mixed"]);
  assert.deepEqual(settings.get("RestartPreventExitStatus"), ["2"]);
  const dataDir = join(dir.path, "var-lib-natsmon");
  const config = join(dir.path, "natsmon.yaml");
  const localize = (value: string) =>
    value
      .replaceAll("/opt/natsmon", CHECKOUT)
      .replaceAll("/etc/natsmon/natsmon.yaml", config)
      .replaceAll("/var/lib/natsmon", dataDir);
  const env = Object.fromEntries(
    (settings.get("Environment") ?? []).map(
      (e) => localize(e).split(/=(.*)/s).slice(0, 2) as [string, string],
    ),
  );
  assert.equal(env.NATSMON_NODE_DATA_DIR, dataDir, "the data dir is the unit's StateDirectory");
  const [command, ...args] = localize(settings.get("ExecStart")![0]!).split(" ");
  const run = () =>
    spawn(command!, args, {
      cwd: localize(settings.get("WorkingDirectory")![0]!),
      // systemd gives a service a bare environment: PATH, and what the unit sets.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });

  await writeFile(config, "scraper: {interval: fortnight}\n");
  const invalid = run();
  let invalidErr = "";
  invalid.stderr.on("data", (c: Buffer) => (invalidErr += c.toString()));
  const [code] = (await once(invalid, "exit")) as [number | null];
  assert.equal(code, 2, invalidErr);
  assert.match(invalidErr, /scraper\.interval/);

  await writeFile(config, "sink: {embedded: {port: -1}}\nscraper: {interval: 1s}\n");
  const node = run();
  let out = "";
  node.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const exited = once(node, "exit") as Promise<[number | null, string | null]>;
  await waitFor(() => /is running; its bus listens at nats:\/\/127\.0\.0\.1:\d+/.test(out), {
    timeoutMs: 60_000,
    message: "the node started",
  });
  const server = () =>
    spawnSync("pgrep", ["-f", `nats-server.*${dataDir}`], { encoding: "utf8" }).stdout.trim();
  assert.notEqual(server(), "", "its embedded nats-server runs, with its store in the data dir");
  node.kill("SIGTERM");
  assert.deepEqual(await exited, [0, null], "SIGTERM to natsmon alone stops it cleanly");
  assert.equal(server(), "", "natsmon stopped its nats-server itself");
});
