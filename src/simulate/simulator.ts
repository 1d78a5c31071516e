import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from "@nats-io/nats-core";
import { gzipSync } from "node:zlib";
import { stringifyExact, type Logger } from "../lib/index.ts";
import { SimSystem, type SimServer } from "./model.ts";
import type { Profile } from "./profiles.ts";
import { connz, healthz, idz, jsz, routez, serverInfo, statsz, varz } from "./replies.ts";
import { accountDetail, accountStatz, accountz, gatewayz, leafz, subsz } from "./account-replies.ts";

export interface Simulator extends AsyncDisposable {
  readonly system: SimSystem;
  /** Requests answered so far. */
  readonly requests: number;
}

type Body = (server: SimServer, request: Record<string, unknown>) => unknown;

/**
 * Answers the `$SYS` monitoring requests on a bus as a synthetic system of
 * `profile.servers` servers would: one reply per server, in nats-server 2.9.10's shapes,
 * gzip-compressed when asked. Values move on each VARZ request (once per scrape), like a
 * live system. A test and benchmark tool and a demo source; never a stand-in for real
 * servers in tests of natsmon's collection.
 */
export async function startSimulator(
  nc: NatsConnection,
  profile: Profile,
  log: Logger,
  options: { version?: string; seed?: number } = {},
): Promise<Simulator> {
  const system = new SimSystem(profile, options.seed, options.version);
  let requests = 0;
  let seq = 0;
  const subs: Subscription[] = [];
  const byId = new Map(system.servers.map((s) => [s.id, s]));

  const reply = (msg: Msg, server: SimServer, envelopeKey: "data" | "statsz", body: unknown) => {
    // Replies still being paced out when the simulator stops are dropped, not sent on a closed connection.
    if (!msg.reply || nc.isClosed()) return;
    const text = stringifyExact({ server: serverInfo(server, ++seq), [envelopeKey]: body });
    if (msg.headers?.get("Accept-Encoding").includes("gzip")) {
      const h = natsHeaders();
      h.set("Content-Encoding", "gzip");
      nc.publish(msg.reply, gzipSync(text), { headers: h });
    } else {
      nc.publish(msg.reply, text);
    }
  };
  // Real servers answer side by side: yielding between the simulated servers interleaves the
  // requests of one scrape, so no gather waits out its quiet window behind another request.
  const eachServer = async (answer: (server: SimServer) => void) => {
    for (const server of system.servers) {
      answer(server);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const requestOf = (msg: Msg): Record<string, unknown> => {
    try {
      return msg.data.length ? (msg.json<Record<string, unknown>>() ?? {}) : {};
    } catch {
      return {};
    }
  };
  const ping = (kind: string, body: Body, envelopeKey: "data" | "statsz" = "data", before?: () => void) => {
    subs.push(
      nc.subscribe(`$SYS.REQ.SERVER.PING.${kind}`, {
        callback: (err, msg) => {
          if (err) return;
          requests++;
          before?.();
          const request = requestOf(msg);
          void eachServer((server) => {
            // A server too old for the request does not answer it, as a real one would not.
            const answer = body(server, request);
            if (answer !== undefined) reply(msg, server, envelopeKey, answer);
          });
        },
      }),
    );
  };

  ping(
    "VARZ",
    (s) => varz(system, s),
    "data",
    () => system.tick(),
  );
  ping("STATSZ", (s) => statsz(system, s), "statsz");
  ping("JSZ", (s) => jsz(system, s));
  ping("HEALTHZ", () => healthz());
  ping("ROUTEZ", (s) => routez(system, s));
  ping("SUBSZ", (s) => subsz(system, s));
  ping("ACCOUNTZ", (s) => accountz(system, s));
  ping("GATEWAYZ", (s) => gatewayz(system, s));
  ping("LEAFZ", (s) => leafz(s));
  // Servers older than 2.10 have no IDZ handler: the request gets no responders, not silence.
  if (system.servers.some((s) => idz(s) !== undefined)) ping("IDZ", (s) => idz(s));
  subs.push(
    nc.subscribe("$SYS.REQ.ACCOUNT.PING.STATZ", {
      callback: (err, msg) => {
        if (err) return;
        requests++;
        void eachServer((server) => reply(msg, server, "data", accountStatz(system, server)));
      },
    }),
  );
  // The simulated servers close no connections: their closed-connection lists are empty.
  ping("CONNZ", (s, r) =>
    Number(r.state ?? 0) === 1
      ? { num_connections: 0, total: 0, offset: 0, limit: Number(r.limit ?? 1024), connections: [] }
      : connz(system, s, Number(r.offset ?? 0), Number(r.limit ?? 1024)),
  );
  // Later pages of CONNZ are asked of one server, by id.
  subs.push(
    nc.subscribe("$SYS.REQ.SERVER.*.CONNZ", {
      callback: (err, msg) => {
        const server = byId.get(msg.subject.split(".")[3] ?? "");
        if (err || !server) return;
        requests++;
        const r = requestOf(msg);
        reply(msg, server, "data", connz(system, server, Number(r.offset ?? 0), Number(r.limit ?? 1024)));
      },
    }),
  );
  // Each account a server lists, in detail: asked of one server, by id.
  subs.push(
    nc.subscribe("$SYS.REQ.SERVER.*.ACCOUNTZ", {
      callback: (err, msg) => {
        const server = byId.get(msg.subject.split(".")[3] ?? "");
        if (err || !server) return;
        requests++;
        const requested = requestOf(msg).account;
        const account = typeof requested === "string" ? requested : "";
        reply(
          msg,
          server,
          "data",
          account ? accountDetail(system, server, account) : accountz(system, server),
        );
      },
    }),
  );
  await nc.flush();
  log.info({ ...profile }, "simulator answering $SYS requests");
  return {
    system,
    get requests() {
      return requests;
    },
    async [Symbol.asyncDispose]() {
      for (const sub of subs) sub.unsubscribe();
      await nc.flush().catch(() => undefined);
    },
  };
}
