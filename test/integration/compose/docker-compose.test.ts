import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { findNatsServer, natsServerConfig, startNatsServer } from "../../../src/bus/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { httpCall } from "../../harness/http-call.ts";
import { dashboardQueries } from "../../harness/dashboard.ts";
import { REPO_ROOT, runNatsmon, spawnNatsmon } from "../../harness/natsmon-process.ts";
import { tempDir } from "../../harness/temp-dir.ts";
import { waitFor } from "../../harness/wait-for.ts";

interface Service {
  image?: string;
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}

/** docker-compose.yml is for users; Docker does not run here, so it is checked by reading it. */
describe("docker-compose.yml", async () => {
  const compose = parse(await readFile(join(REPO_ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };
  const services = compose.services;

  test("has a 3-node NATS cluster, a scrape node and a catalog node, the gateway, an Alertmanager, Prometheus and Grafana", () => {
    assert.deepEqual(Object.keys(services).sort(), [
      "alertmanager",
      "deps",
      "gateway",
      "grafana",
      "n1",
      "n2",
      "n3",
      "natsmon-catalog",
      "natsmon-scrape",
      "prometheus",
    ]);
    for (const n of ["n1", "n2", "n3"]) assert.match(services[n]!.image ?? "", /^nats:/);
    for (const node of ["natsmon-scrape", "natsmon-catalog"]) {
      assert.match(
        services[node]!.command!.join(" "),
        /src\/main\.ts run --config \/etc\/natsmon\/natsmon\.yaml/,
      );
      assert.deepEqual(services[node]!.depends_on?.deps, { condition: "service_completed_successfully" });
    }
    assert.match(services.gateway!.command!.join(" "), /src\/main\.ts gateway /);
    assert.match(services.alertmanager!.image ?? "", /^prom\/alertmanager:/);
  });

  test("gives the gateway the host's token in the variable it reads, required, with no default, and its bus password in a variable, neither on its command line", async () => {
    const gateway = services.gateway!;
    const command = gateway.command!;
    assert.deepEqual(command.slice(0, 3), ["node", "src/main.ts", "gateway"]);
    assert.ok(!command.some((arg) => /auth-token|password|token|\$/.test(arg)), command.join(" "));
    const env = gateway.environment ?? {};
    assert.deepEqual(Object.keys(env), ["NATSMON_GATEWAY_AUTH_TOKEN", "NATS_USER", "NATS_PASSWORD"]);
    // Compose substitutes the host's variable, and refuses to start when it is unset or empty.
    assert.match(env.NATSMON_GATEWAY_AUTH_TOKEN ?? "", /^\$\{NATSMON_GATEWAY_AUTH_TOKEN:\?[^}]+\}$/);
    // Run as compose runs it, with its environment, against a bus that takes only that user and
    // password: the gateway takes the token and connects with the variables' credentials.
    await using dir = await tempDir();
    const workDir = join(dir.path, "nats");
    await using bus = await startNatsServer({
      workDir,
      configText: natsServerConfig({
        serverName: "compose-bus",
        host: "127.0.0.1",
        port: -1,
        workDir,
        accounts: [{ name: "MON", users: [{ user: env.NATS_USER!, password: env.NATS_PASSWORD! }] }],
      }),
    });
    const args = command
      .slice(2)
      .map((arg, i, all) =>
        all[i - 1] === "--server" ? bus.clientUrl : all[i - 1] === "--listen" ? "127.0.0.1:0" : arg,
      );
    await using run = spawnNatsmon(args, { ...env, NATSMON_GATEWAY_AUTH_TOKEN: "from-the-host" });
    const base = await waitFor(() => /listens at (http:\/\/[\d.:]*\d)/.exec(run.stdout())?.[1], {
      message: "the gateway connected to its bus",
    });
    assert.equal((await httpCall(base, "/healthz")).status, 200);
  });

  test("installs the natsmon services' packages into a volume of their own, leaving the checkout's node_modules (and the host's Node 24) alone", () => {
    assert.deepEqual(services.deps!.command, ["npm", "ci", "--omit=dev"]);
    const onCheckout = Object.entries(services).filter(([, s]) => (s.volumes ?? []).includes("./:/app"));
    assert.deepEqual(onCheckout.map(([name]) => name).sort(), [
      "deps",
      "gateway",
      "natsmon-catalog",
      "natsmon-scrape",
    ]);
    for (const [name, service] of onCheckout) {
      assert.ok(service.volumes!.includes("node-modules:/app/node_modules"), `${name} mounts node-modules`);
    }
    assert.ok("node-modules" in compose.volumes, "node-modules is a named volume");
  });

  test("has a Prometheus that scrapes both natsmon nodes where their configs serve metrics, with rules promtool accepts and whose tests pass", async () => {
    assert.match(services.prometheus!.image ?? "", /^prom\/prometheus:/);
    const dir = join(REPO_ROOT, "deploy/prometheus");
    for (const args of [
      ["check", "config", join(dir, "prometheus.yml")],
      ["check", "rules", join(dir, "natsmon-rules.yml")],
      ["test", "rules", join(dir, "natsmon-rules.test.yml")],
    ]) {
      const r = spawnSync("promtool", args, { encoding: "utf8", cwd: dir });
      assert.equal(r.status, 0, `promtool ${args.join(" ")}: ${r.stderr}${r.stdout}`);
    }
    const prometheus = parse(await readFile(join(dir, "prometheus.yml"), "utf8")) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const job = prometheus.scrape_configs.find((c) => c.job_name === "natsmon");
    const targets = job?.static_configs.flatMap((c) => c.targets).sort();
    const expected: string[] = [];
    for (const [service, file] of [
      ["natsmon-catalog", "catalog.yaml"],
      ["natsmon-scrape", "scrape.yaml"],
    ] as const) {
      const result = await loadConfig({ file: join(REPO_ROOT, "deploy/natsmon", file), hostname: service });
      assert.ok(result.ok, file);
      assert.equal(
        result.config.node.metricsListen?.host,
        "0.0.0.0",
        `${file} serves metrics on every interface`,
      );
      expected.push(`${service}:${result.config.node.metricsListen.port}`);
    }
    assert.deepEqual(targets, expected, "the natsmon job scrapes each node at its node.metrics-listen port");
  });

  test("has a Grafana provisioned with the compose file's Prometheus and a dashboard whose every query promtool accepts", async () => {
    assert.match(services.grafana!.image ?? "", /^grafana\/grafana-oss:/);
    const dir = join(REPO_ROOT, "deploy/grafana");
    const datasources = parse(
      await readFile(join(dir, "provisioning/datasources/prometheus.yml"), "utf8"),
    ) as { datasources: { type: string; url: string }[] };
    assert.deepEqual(
      datasources.datasources.map((d) => [d.type, d.url]),
      [["prometheus", "http://prometheus:9090"]],
    );
    assert.ok(
      services.prometheus!.command!.every((c) => !c.includes("web.listen-address")),
      "Prometheus listens on its default port, 9090, which the data source names",
    );
    const providers = parse(await readFile(join(dir, "provisioning/dashboards/natsmon.yml"), "utf8")) as {
      providers: { options: { path: string } }[];
    };
    assert.ok(
      services.grafana!.volumes!.includes(
        `./deploy/grafana/dashboards:${providers.providers[0]!.options.path}:ro`,
      ),
      "the provider's path is where the dashboards are mounted",
    );
    // Each panel query, with the dashboard's $system variable set, as a recording rule for promtool to parse.
    const exprs = dashboardQueries(JSON.parse(await readFile(join(dir, "dashboards/nats.json"), "utf8")));
    assert.ok(exprs.length >= 20, `${exprs.length} queries`);
    await using scratch = await tempDir();
    const rules = join(scratch.path, "dashboard-rules.yml");
    await writeFile(
      rules,
      stringify({
        groups: [
          {
            name: "dashboard",
            rules: exprs.map((expr, i) => ({
              record: `dashboard:query_${i}`,
              expr: expr.replaceAll("$system", "x"),
            })),
          },
        ],
      }),
    );
    const r = spawnSync("promtool", ["check", "rules", rules], { encoding: "utf8" });
    assert.equal(r.status, 0, `promtool check rules: ${r.stderr}${r.stdout}`);
  });

  test("has an Alertmanager config that amtool accepts", () => {
    const r = spawnSync("amtool", ["check-config", join(REPO_ROOT, "deploy/alertmanager/alertmanager.yml")], {
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr + r.stdout);
  });

  test("mounts only files that exist in the repository", () => {
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const host = volume.split(":")[0]!;
        if (!host.startsWith("./")) continue;
        assert.ok(existsSync(join(REPO_ROOT, host)), `${name} mounts missing ${host}`);
      }
    }
  });

  test("gives each NATS server JetStream, the system account and routes to the other two", async () => {
    const accounts = await readFile(join(REPO_ROOT, "deploy/nats/accounts.conf"), "utf8");
    assert.match(accounts, /system_account: SYS/);
    assert.match(accounts, /jetstream: enabled/);
    for (const n of ["n1", "n2", "n3"]) {
      const conf = await readFile(join(REPO_ROOT, `deploy/nats/${n}.conf`), "utf8");
      assert.match(conf, /jetstream \{/);
      assert.match(conf, /include \.\/accounts\.conf/);
      const routes = /routes: \[(.*)\]/.exec(conf)?.[1] ?? "";
      const others = ["n1", "n2", "n3"].filter((o) => o !== n);
      assert.deepEqual(
        [...routes.matchAll(/nats:\/\/(n\d):6222/g)].map((m) => m[1]),
        others,
        `${n} routes to ${others.join(", ")}`,
      );
    }
  });

  test("has NATS configs that nats-server itself accepts (nats-server -t)", () => {
    for (const n of ["n1", "n2", "n3"]) {
      const r = spawnSync(findNatsServer(), ["-t", "-c", join(REPO_ROOT, `deploy/nats/${n}.conf`)], {
        encoding: "utf8",
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout + r.stderr, /is valid/);
    }
  });

  test("mounts natsmon configurations that pass natsmon config check: one system split by role, streams at 3 replicas, the Alertmanager notified", async () => {
    const roles: Record<string, string[]> = {};
    for (const name of ["scrape", "catalog"]) {
      const file = join(REPO_ROOT, `deploy/natsmon/${name}.yaml`);
      const result = await loadConfig({ file });
      assert.ok(result.ok, file);
      if (!result.ok) continue;
      assert.equal(result.config.sink.replicas, 3);
      assert.equal(result.config.systems[0]?.id, "east");
      roles[name] = [...result.config.systems[0].roles];
      if (name === "catalog") {
        const [endpoint] = result.config.notifications.endpoints;
        assert.equal(endpoint?.type, "alertmanager");
        assert.equal(endpoint?.url, "http://alertmanager:9093");
      }
      const check = await runNatsmon(["config", "check", "--config", file]);
      assert.equal(check.code, 0, check.stderr);
    }
    assert.deepEqual(roles, { scrape: ["scrape"], catalog: ["catalog"] });
  });
});
