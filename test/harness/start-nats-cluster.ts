import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsServerProcess } from "../../src/bus/index.ts";
import { SYS_USER, launch, portOf, storeDirOf, type ServerSpec } from "./start-nats-server.ts";
import { waitFor } from "./wait-for.ts";

export interface ClusterNode {
  readonly name: string;
  readonly url: string;
  /** The server's JetStream store directory (streams under `jetstream/<account>/streams/`). */
  readonly storeDir: string;
  readonly running: boolean;
  stop(): Promise<void>;
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): its sockets stay open, nothing is answered. */
  pause(): void;
  /** Lets a frozen server go on (SIGCONT). */
  resume(): void;
}

export interface TestCluster extends AsyncDisposable {
  readonly name: string;
  readonly nodes: readonly ClusterNode[];
  /** Client URLs of every node, comma-separated. */
  readonly urls: string;
  /** Waits until the JetStream meta group has a leader and `size` current peers. */
  waitForMeta(): Promise<void>;
}

/**
 * A real JetStream cluster (n1..nN) with a system account, on OS-chosen ports. Each
 * node's config names all the others, so any node can be stopped and started again
 * (same ports, same store) and rejoin.
 */
export async function startTestCluster(
  options: {
    size?: number;
    name?: string;
    extraConfig?: string;
    /** Appended to one node's configuration, by its name (n1, n2…): its server_tags, say. */
    nodeConfig?: (name: string) => string;
    jetstreamMax?: ServerSpec["jetstreamMax"];
  } = {},
): Promise<TestCluster> {
  const size = options.size ?? 3;
  const clusterName = options.name ?? "c1";
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster(
        size,
        clusterName,
        options.extraConfig,
        options.jetstreamMax,
        options.nodeConfig,
      );
    } catch (err) {
      // The probes' ports are free again between the probe and the real start, and another
      // process (a test running alongside) may take one meanwhile: the node then cannot
      // bind it and exits. New probes choose new ports.
      if (!(err instanceof PortsTakenError) || attempt === START_ATTEMPTS) throw err;
    }
  }
}

const START_ATTEMPTS = 3;

/** A node of the cluster exited during start-up; the others were stopped. */
class PortsTakenError extends Error {}

/** `extraConfig` is appended to every node's configuration once the ports are known (a gateway, say). */
async function startCluster(
  size: number,
  clusterName: string,
  extraConfig?: string,
  jetstreamMax?: ServerSpec["jetstreamMax"],
  nodeConfig?: (name: string) => string,
): Promise<TestCluster> {
  const root = await mkdtemp(join(tmpdir(), `natsmon-cluster-${clusterName}-`));
  // JetStream clustering refuses to start without routes, and routes need ports: a first
  // start without JetStream lets the OS choose each node's ports, then all start for real.
  const specs: ServerSpec[] = [];
  for (let i = 1; i <= size; i++) {
    const spec: ServerSpec = {
      name: `n${i}`,
      workDir: join(root, `n${i}`),
      port: -1,
      cluster: { name: clusterName, port: -1, routes: [] },
      jetstream: false,
    };
    const probe = await launch(spec);
    spec.port = portOf(probe.clientUrl);
    spec.cluster!.port = portOf(probe.ports.cluster![0]!);
    await probe.stop();
    specs.push(spec);
  }
  for (const spec of specs) {
    spec.jetstream = true;
    if (jetstreamMax) spec.jetstreamMax = jetstreamMax;
    spec.cluster!.routes = specs.filter((s) => s !== spec).map((s) => `nats://127.0.0.1:${s.cluster!.port}`);
    const config = [extraConfig, nodeConfig?.(spec.name)].filter(Boolean).join("\n");
    if (config) spec.extraConfig = config;
  }
  // Every node that started is stopped again when one did not: a server left running would
  // keep the test process alive after its tests failed.
  const launched = await Promise.allSettled(specs.map((spec) => launch(spec)));
  const procs: (NatsServerProcess | undefined)[] = launched.map((l) =>
    l.status === "fulfilled" ? l.value : undefined,
  );
  const failed = launched.find((l) => l.status === "rejected");
  if (failed) {
    await Promise.all(procs.map(async (p) => p?.stop()));
    await rm(root, { recursive: true, force: true });
    throw new PortsTakenError(String(failed.reason), { cause: failed.reason });
  }
  const urls = specs.map((s) => `nats://127.0.0.1:${s.port}`).join(",");
  const nodes: ClusterNode[] = specs.map((spec, i) => ({
    name: spec.name,
    url: `nats://127.0.0.1:${spec.port}`,
    storeDir: storeDirOf(spec),
    get running() {
      return procs[i] !== undefined;
    },
    async stop() {
      // A frozen server would not act on the stop signal.
      procs[i]?.kill("SIGCONT");
      await procs[i]?.stop();
      procs[i] = undefined;
    },
    pause() {
      procs[i]?.kill("SIGSTOP");
    },
    resume() {
      procs[i]?.kill("SIGCONT");
    },
    async kill() {
      procs[i]?.kill("SIGKILL");
      await procs[i]?.exited;
      procs[i] = undefined;
    },
    async start() {
      if (!procs[i]) procs[i] = await launch(spec);
    },
  }));
  const cluster: TestCluster = {
    name: clusterName,
    nodes,
    urls,
    async waitForMeta() {
      const nc = await connect({ servers: urls.split(","), user: SYS_USER.user, pass: SYS_USER.password });
      try {
        await waitFor(
          async () => {
            const reply = await nc.request("$SYS.REQ.SERVER.PING.JSZ", "{}", { timeout: 2000 });
            const meta =
              reply.json<{ data?: { meta_cluster?: { leader?: string; cluster_size?: number } } }>().data
                ?.meta_cluster ?? {};
            return meta.leader !== undefined && meta.cluster_size === size;
          },
          { timeoutMs: 30_000, message: `meta group of ${size} with a leader` },
        );
      } finally {
        await nc.close();
      }
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(procs.map(async (p) => p?.stop()));
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await cluster.waitForMeta();
  } catch (err) {
    await cluster[Symbol.asyncDispose]();
    throw err;
  }
  return cluster;
}
