/**
 * npm run bench:notify — latency from epoch commit to receipt at a local HTTP receiver, per
 * endpoint type, for 1, 100 and 10,000 transitions in one epoch. The pipeline is the real one:
 * a real nats-server with JetStream, the node's notifier (outbox stream, the endpoint's durable
 * consumer, delivered-state KV, delivery log), real HTTP over loopback. "Commit" is the moment
 * the catalog side hands an epoch's transitions to the notifier, right after its checks ran.
 * Rounds alternate firing and resolving the same findings, so every round is a change.
 * Prints p50 / p99 of the time until the receiver holds every alert of the epoch, and of each
 * alert's own arrival. Asserts nothing.
 *   BENCH_NOTIFY_ROUNDS=100 npm run bench:notify
 */
import { createServer } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { natsServerConfig, startNatsServer } from "../src/bus/index.ts";
import { checkDescription } from "../src/checks/index.ts";
import type { EndpointConfig } from "../src/config/index.ts";
import type { Transition } from "../src/domain/index.ts";
import { silentLogger } from "../src/lib/index.ts";
import { startNotifier } from "../src/notify/index.ts";

const ROUNDS = Number(process.env.BENCH_NOTIFY_ROUNDS ?? 100);
const SIZES: { transitions: number; rounds: number }[] = [
  { transitions: 1, rounds: ROUNDS },
  { transitions: 100, rounds: ROUNDS },
  { transitions: 10_000, rounds: Math.max(3, Math.round(ROUNDS / 10)) },
];

const percentile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const fmt = (ms: number) => `${ms.toFixed(1)} ms`.padStart(10);

/** A loopback receiver that notes when each alert arrived. */
async function startReceiver() {
  let arrivals: number[] = [];
  let expect = Infinity;
  let done: () => void = () => {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown[] | { alerts: unknown[] };
      const count = Array.isArray(body) ? body.length : body.alerts.length;
      for (let i = 0; i < count; i++) arrivals.push(at);
      res.end();
      if (arrivals.length >= expect) done();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    /** Resolves with the arrival times once `count` alerts arrived. */
    expectAlerts(count: number): Promise<number[]> {
      arrivals = [];
      expect = count;
      return new Promise((resolve) => {
        done = () => resolve(arrivals);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function transitions(n: number, round: number, epoch: Date): Transition[] {
  const startsAt = new Date(epoch.getTime() - (round % 2) * 1000);
  return Array.from({ length: n }, (_, i) => {
    const finding = {
      code: "server-011",
      entityType: "server",
      entityPk: i + 1,
      entityName: `server-${i + 1}`,
      severity: "warning" as const,
      startsAt,
    };
    return round % 2 === 0
      ? { status: "firing" as const, finding }
      : { status: "resolved" as const, finding, endsAt: epoch };
  });
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "natsmon-bench-notify-"));
  const server = await startNatsServer({
    workDir: join(dir, "nats"),
    configText: natsServerConfig({
      serverName: "bench",
      host: "127.0.0.1",
      port: -1,
      workDir: join(dir, "nats"),
      storeDir: join(dir, "js"),
    }),
  });
  const nc = await connect({ servers: server.clientUrl });
  const receiver = await startReceiver();
  const rows: string[] = [];
  let epochMs = Date.UTC(2026, 10, 23);
  try {
    for (const type of ["webhook", "alertmanager"] as const) {
      const endpoint: EndpointConfig = {
        type,
        name: `bench-${type}`,
        url: receiver.url,
        enabled: true,
        authType: "hmac",
        authToken: "bench-secret",
        subscriptions: ["*"],
        ignore: [],
        systems: [],
      };
      const notifier = await startNotifier({
        nc,
        // A node of its own per type: a new endpoint first learns what is firing in its outbox.
        nodeId: `bench_${type}`,
        replicas: 1,
        catalogSystems: ["bench"],
        endpoints: [endpoint],
        disabledChecks: new Map(),
        body: { describe: checkDescription, externalUrl: "https://natsmon.example.com", systemCount: 1 },
        userAgent: "natsmon-bench",
        log: silentLogger(),
        // No minute resend during the measurement.
        timing: { retryFirstMs: 2_000, retryMaxMs: 60_000, resendEveryMs: 3_600_000 },
      });
      try {
        for (const size of SIZES) {
          const complete: number[] = [];
          const each: number[] = [];
          // Warm-up round: connections, consumer and KV paths.
          for (let round = -2; round < size.rounds; round++) {
            epochMs += 60_000;
            const epoch = new Date(epochMs);
            const batch = transitions(size.transitions, round + 2, epoch);
            const arrived = receiver.expectAlerts(size.transitions);
            const t0 = performance.now();
            await notifier.enqueue("bench", epoch, batch);
            const times = await arrived;
            if (round < 0) continue;
            complete.push(Math.max(...times) - t0);
            for (const t of times) each.push(t - t0);
          }
          rows.push(
            `${type.padEnd(13)} ${String(size.transitions).padStart(6)} ${String(size.rounds).padStart(6)}` +
              `${fmt(percentile(complete, 50))}${fmt(percentile(complete, 99))}` +
              `${fmt(percentile(each, 50))}${fmt(percentile(each, 99))}`,
          );
          console.log(rows.at(-1));
        }
      } finally {
        await notifier[Symbol.asyncDispose]();
      }
    }
  } finally {
    await receiver.close();
    await nc.close();
    await server[Symbol.asyncDispose]();
    await rm(dir, { recursive: true, force: true });
  }
  console.log("\nlatency from epoch commit (transitions handed to the notifier) to receipt, loopback");
  console.log("endpoint      transitions rounds  epoch p50  epoch p99  alert p50  alert p99");
  for (const row of rows) console.log(row);
  console.log("target: p99 under 100 ms for 100 transitions");
}

await main();
