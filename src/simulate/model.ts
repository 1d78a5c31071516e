import type { Profile } from "./profiles.ts";

/** A deterministic pseudo-random sequence (mulberry32), so every run simulates the same system. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SimServer {
  name: string;
  /** nats-server release the server claims (default 2.9.10, the shapes the replies follow). */
  version: string;
  id: string;
  cluster: string;
  port: number;
  start: string;
  cpu: number;
  mem: number;
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
  totalConnections: number;
  slowConsumers: number;
}

export interface SimStream {
  account: string;
  name: string;
  created: string;
  replicas: string[];
  leader: string;
  storage: "file" | "memory";
  messages: number;
  bytes: number;
  firstSeq: number;
  consumers: SimConsumer[];
  /** Stream metadata (2.10+), e.g. io.nats.monitor.* thresholds; reported only when set. */
  metadata?: Record<string, string>;
}

export interface SimConsumer {
  name: string;
  created: string;
  leader: string;
  delivered: number;
  ackFloor: number;
  ackPending: number;
  redelivered: number;
  /** Consumer metadata (2.10+); reported only when set. */
  metadata?: Record<string, string>;
}

export interface SimConnection {
  cid: number;
  server: string;
  account: string;
  name: string;
  port: number;
  start: string;
  inMsgs: number;
  outMsgs: number;
  subscriptions: number;
}

/** The whole simulated system; `tick()` moves it one epoch on, like a live one. */
export class SimSystem {
  readonly servers: SimServer[] = [];
  readonly streams: SimStream[] = [];
  readonly connections: SimConnection[] = [];
  readonly byServer = new Map<string, { streams: SimStream[]; connections: SimConnection[] }>();
  readonly #rand: () => number;
  readonly started: string;
  epoch = 0;

  constructor(profile: Profile, seed = 42, version = "2.9.10") {
    this.#rand = random(seed);
    const r = this.#rand;
    this.started = new Date(Date.now() - 86_400_000).toISOString();
    for (let i = 0; i < profile.servers; i++) {
      const name = `s${String(i + 1).padStart(3, "0")}`;
      this.servers.push({
        name,
        version,
        id: `N${name.toUpperCase()}${"X".repeat(51)}`.slice(0, 56),
        cluster: `c${Math.floor(i / profile.clusterSize) + 1}`,
        port: 4222 + i,
        start: this.started,
        cpu: 5 + r() * 20,
        mem: 50_000_000 + Math.floor(r() * 200_000_000),
        inMsgs: 0,
        outMsgs: 0,
        inBytes: 0,
        outBytes: 0,
        totalConnections: 0,
        slowConsumers: 0,
      });
      this.byServer.set(name, { streams: [], connections: [] });
    }
    const clusterOf = (i: number) => {
      const cluster = this.servers[i]!.cluster;
      return this.servers.filter((s) => s.cluster === cluster);
    };
    for (let i = 0; i < profile.streams; i++) {
      const home = clusterOf(i % this.servers.length);
      const replicas = home.length >= 3 && r() < 0.6 ? 3 : 1;
      const first = Math.floor(r() * home.length);
      const placed = Array.from({ length: replicas }, (_, k) => home[(first + k) % home.length]!.name);
      const stream: SimStream = {
        account: `ACC${(i % profile.accounts) + 1}`,
        name: `STREAM_${i + 1}`,
        created: this.started,
        replicas: placed,
        leader: placed[0]!,
        storage: r() < 0.8 ? "file" : "memory",
        messages: Math.floor(r() * 100_000),
        bytes: 0,
        firstSeq: 1,
        consumers: [],
      };
      stream.bytes = stream.messages * 120;
      this.streams.push(stream);
      for (const server of placed) this.byServer.get(server)!.streams.push(stream);
    }
    for (let i = 0; i < profile.consumers; i++) {
      const stream = this.streams[i % this.streams.length]!;
      const delivered = Math.floor(stream.messages * r());
      stream.consumers.push({
        name: `C_${i + 1}`,
        created: this.started,
        leader: stream.replicas[Math.floor(r() * stream.replicas.length)]!,
        delivered,
        ackFloor: Math.max(0, delivered - Math.floor(r() * 50)),
        ackPending: 0,
        redelivered: 0,
      });
    }
    for (let i = 0; i < profile.connections; i++) {
      const server = this.servers[i % this.servers.length]!;
      const conn: SimConnection = {
        cid: i + 1,
        server: server.name,
        // Every account has clients on every server, as in a real system.
        account: `ACC${(Math.floor(i / profile.servers) % profile.accounts) + 1}`,
        name: `app-${i % 97}`,
        port: 30_000 + (i % 30_000),
        start: this.started,
        inMsgs: 0,
        outMsgs: 0,
        subscriptions: 1 + Math.floor(r() * 5),
      };
      this.connections.push(conn);
      this.byServer.get(server.name)!.connections.push(conn);
      server.totalConnections++;
    }
  }

  /** One epoch of traffic: counters grow, gauges wander, consumers fall behind or catch up. */
  tick(): void {
    const r = this.#rand;
    this.epoch++;
    for (const s of this.servers) {
      const msgs = Math.floor(1_000 + r() * 10_000);
      s.inMsgs += msgs;
      s.outMsgs += Math.floor(msgs * 1.5);
      s.inBytes += msgs * 200;
      s.outBytes += msgs * 300;
      s.cpu = Math.max(0.5, Math.min(400, s.cpu + (r() - 0.5) * 4));
      s.mem = Math.max(10_000_000, s.mem + Math.floor((r() - 0.5) * 4_000_000));
      if (r() < 0.01) s.slowConsumers++;
    }
    for (const st of this.streams) {
      const added = Math.floor(r() * 100);
      st.messages += added;
      st.bytes += added * 120;
      for (const c of st.consumers) {
        c.delivered = Math.min(st.firstSeq + st.messages - 1, c.delivered + Math.floor(r() * 120));
        c.ackPending = Math.floor(r() * 30);
        c.ackFloor = Math.max(c.ackFloor, c.delivered - c.ackPending);
        if (r() < 0.05) c.redelivered++;
      }
    }
    for (const c of this.connections) {
      c.inMsgs += Math.floor(r() * 50);
      c.outMsgs += Math.floor(r() * 50);
    }
  }
}
