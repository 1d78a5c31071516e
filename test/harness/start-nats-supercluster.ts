import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsServerProcess } from "../../src/bus/index.ts";
import { gather } from "../../src/scrape/index.ts";
import { APP_USER, SYS_USER, launch, portOf, type ServerSpec } from "./start-nats-server.ts";
import { waitFor } from "./wait-for.ts";

/** n1 and n2 form cluster east, w1 is cluster west, l1 is a leafnode of n1. */
export const SUPERCLUSTER_SERVERS = ["l1", "n1", "n2", "w1"] as const;
export type SuperclusterServer = (typeof SUPERCLUSTER_SERVERS)[number];

export interface TestSupercluster extends AsyncDisposable {
  /** Client URL of each server (APP account without credentials). */
  readonly urls: Readonly<Record<SuperclusterServer, string>>;
  /** Stops one server; it stays stopped. */
  stop(server: SuperclusterServer): Promise<void>;
}

const WINDOW = { quietMs: 300, timeoutMs: 5000 };

/**
 * Real nats-server processes linked every way a monitor must see: a 2-node cluster "east"
 * joined by a gateway to a 1-node cluster "west", and a leafnode server connected to n1
 * through two remotes, APP and SYS. All share the system account (the leaf through its SYS
 * remote, without which it would not answer `$SYS` pings, nats-monitoring.md §1). Ports
 * are OS-chosen: each server's gateway and leafnode ports are read from its VARZ before
 * the servers that connect to it start. JetStream is off, which none of these links need.
 * Resolves once every route, gateway (both directions) and leafnode connection is up.
 */
export async function startTestSupercluster(): Promise<TestSupercluster> {
  const root = await mkdtemp(join(tmpdir(), "natsmon-supercluster-"));
  const procs = new Map<SuperclusterServer, NatsServerProcess>();
  const start = async (name: SuperclusterServer, spec: Omit<ServerSpec, "name" | "workDir" | "port">) => {
    const proc = await launch({ name, workDir: join(root, name), port: -1, jetstream: false, ...spec });
    procs.set(name, proc);
    return proc;
  };
  const dispose = async () => {
    await Promise.all([...procs.values()].map((p) => p.stop()));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const w1 = await start("w1", { extraConfig: gatewayBlock("west", []) });
    const westGateway = (await varzOf(w1.clientUrl)).gateway.port;
    const toWest = [{ name: "west", url: `nats://127.0.0.1:${westGateway}` }];
    const n1 = await start("n1", {
      cluster: { name: "east", port: -1, routes: [] },
      extraConfig: gatewayBlock("east", toWest) + 'leafnodes { listen: "127.0.0.1:-1" }\n',
    });
    const leafPort = (await varzOf(n1.clientUrl)).leaf.port;
    await start("n2", {
      cluster: { name: "east", port: -1, routes: [`nats://127.0.0.1:${portOf(n1.ports.cluster![0]!)}`] },
      extraConfig: gatewayBlock("east", toWest),
    });
    await start("l1", { extraConfig: leafRemotes(leafPort) });
    await waitForLinks(n1.clientUrl);
  } catch (err) {
    await dispose();
    throw err;
  }
  const urls = Object.fromEntries(SUPERCLUSTER_SERVERS.map((s) => [s, procs.get(s)!.clientUrl]));
  return {
    urls: urls as Record<SuperclusterServer, string>,
    async stop(server) {
      await procs.get(server)?.stop();
    },
    [Symbol.asyncDispose]: dispose,
  };
}

function gatewayBlock(name: string, remotes: readonly { name: string; url: string }[]): string {
  const gateways = remotes.map(
    (r) => `{ name: ${JSON.stringify(r.name)}, urls: [${JSON.stringify(r.url)}] }`,
  );
  return `gateway {\n  name: ${JSON.stringify(name)}\n  listen: "127.0.0.1:-1"\n  gateways: [${gateways.join(", ")}]\n}\n`;
}

function leafRemotes(port: number): string {
  const remote = (user: { user: string; password: string }, account: string) =>
    `{ urls: [${JSON.stringify(`nats-leaf://${user.user}:${user.password}@127.0.0.1:${port}`)}], account: ${JSON.stringify(account)} }`;
  return `leafnodes {\n  remotes: [\n    ${remote(APP_USER, "APP")}\n    ${remote(SYS_USER, "SYS")}\n  ]\n}\n`;
}

interface Varz {
  gateway: { port: number };
  leaf: { port: number };
}

/** VARZ of the server at `url`, asked before anything else links to it (so it answers alone). */
async function varzOf(url: string): Promise<Varz> {
  const nc = await connect({ servers: url, user: SYS_USER.user, pass: SYS_USER.password });
  try {
    const reply = await nc.request("$SYS.REQ.SERVER.PING.VARZ", "{}", { timeout: 5000 });
    return reply.json<{ data: Varz }>().data;
  } finally {
    await nc.close();
  }
}

type Data = Record<string, unknown>;

/** Waits until the links are all up, as their own monitoring replies say. */
async function waitForLinks(url: string): Promise<void> {
  const nc = await connect({ servers: url, user: SYS_USER.user, pass: SYS_USER.password });
  const dataOf = async (subject: string) => {
    const result = await gather(nc, subject, {}, WINDOW);
    const data = new Map<string, Data>();
    if (result.kind === "replies") {
      for (const r of result.replies) data.set(r.server, (r.envelope as { data?: Data }).data ?? {});
    }
    return data;
  };
  const count = (value: unknown) => (value && typeof value === "object" ? Object.keys(value).length : 0);
  try {
    await waitFor(
      async () => {
        const [routez, gatewayz, leafz] = await Promise.all(
          ["ROUTEZ", "GATEWAYZ", "LEAFZ"].map((kind) => dataOf(`$SYS.REQ.SERVER.PING.${kind}`)),
        );
        if (SUPERCLUSTER_SERVERS.some((s) => !routez!.has(s))) return false;
        const routed = ["n1", "n2"].every((s) => routez!.get(s)?.num_routes === 1);
        // Each server has one outbound connection per remote gateway, to any one of its servers.
        const outbound = ["n1", "n2", "w1"].every((s) => count(gatewayz!.get(s)?.outbound_gateways) === 1);
        const inboundOf = (s: string) => {
          const inbound = (gatewayz!.get(s)?.inbound_gateways ?? {}) as Record<string, unknown[]>;
          return Object.values(inbound).reduce((sum, list) => sum + list.length, 0);
        };
        const inbound = inboundOf("w1") === 2 && inboundOf("n1") + inboundOf("n2") === 1;
        return routed && outbound && inbound && leafz!.get("n1")?.leafnodes === 2;
      },
      { timeoutMs: 30_000, message: "routes, gateways and leafnodes of the supercluster" },
    );
  } finally {
    await nc.close();
  }
}
