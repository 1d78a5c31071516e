/**
 * Micro services (ADR-32). `$SRV.*` lives in each application account and the system account
 * cannot reach it (nats-monitoring §0.15), so each configured account is asked through its
 * own connection. `$SRV.INFO` and `$SRV.STATS` are gathered like `$SYS` requests (quiet
 * window), deduplicated by instance id, and merged into one reply per account:
 * `{account, data: {services: [instance…]}}`, each instance its INFO fields plus `started`
 * and, per endpoint, the STATS figures, and `answered`: the requests it answered. An account
 * whose discovery failed (no connection, no answer at all, a refused request) gets no reply
 * but an error naming it and why, so "no services" is only ever what the servers said.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { watchPublishRefusals } from "../lib/index.ts";
import type { OwnConnection } from "../protocol/index.ts";
import {
  gather,
  type GatheredReply,
  type GatherOptions,
  type GatherResult,
  type Identify,
} from "./gather.ts";
import { ownConnection } from "./own-connection.ts";

/** The scraper's source token for service replies; the reply's `server` is the account. */
export const SERVICES_SOURCE = "services";

export interface ServiceAccount {
  /** The account's name, as stored in the catalog. */
  readonly name: string;
  /**
   * A connection authenticated as a user of that account. Called every epoch: one that
   * cannot connect yet is reported in the epoch's errors and tried again next time.
   */
  readonly connection: () => Promise<NatsConnection>;
}

export interface AccountServices {
  readonly account: string;
  /** The merged reply, JSON, ready for the scrape stream. */
  readonly data: Uint8Array;
  readonly instances: number;
  readonly duplicates: number;
  readonly bytes: number;
  readonly ms: number;
  /** Why nothing could be asked (a closed connection, say); the epoch records it. */
  readonly error?: string;
  /** natsmon's connection in the account, once connected (own-connection.ts). */
  readonly connection?: OwnConnection;
}

type Json = Record<string, unknown>;

const byInstanceId: Identify = (parsed) => {
  const id = (parsed as { id?: unknown } | null)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
};

/** The discovery requests, asked side by side. */
const DISCOVERY = ["$SRV.INFO", "$SRV.STATS"] as const;

/**
 * Gathers one account's service instances. No responders simply means no services. A
 * discovery that got no answer at all (neither an instance nor the server's no responders)
 * or whose request the server refused says nothing about the account's services: it is an
 * error, so the account is not among those gathered this epoch and no service of it is
 * judged gone (service-002).
 */
export async function gatherServices(
  account: ServiceAccount,
  options: GatherOptions,
): Promise<AccountServices> {
  const started = performance.now();
  let connection: OwnConnection | undefined;
  const failed = (cause: string): AccountServices => ({
    ...(connection ? { connection } : {}),
    account: account.name,
    data: new Uint8Array(),
    instances: 0,
    duplicates: 0,
    bytes: 0,
    ms: performance.now() - started,
    error: `services of account ${account.name}: ${cause}`,
  });
  try {
    const nc = await account.connection();
    connection = ownConnection(nc, account.name);
    const refused = new Set<string>();
    const refusals = watchPublishRefusals(nc, (subject) => {
      if ((DISCOVERY as readonly string[]).includes(subject)) refused.add(subject);
    });
    let results: GatherResult[];
    try {
      results = await Promise.all(DISCOVERY.map((subject) => gather(nc, subject, {}, options, byInstanceId)));
    } finally {
      await refusals.stop();
    }
    const [info, stats] = results as [GatherResult, GatherResult];
    if (refused.size > 0) {
      return failed(
        `the server refused its user permission to publish to ${[...refused].sort().join(", ")}: ` +
          "grant the account's user publish on $SRV.> (and subscribe on _INBOX.>); its services are unknown this epoch",
      );
    }
    if (!answered(info) && !answered(stats)) {
      return failed(
        `no answer to ${DISCOVERY.join(" or ")} within scraper.timeout (${options.timeoutMs} ms), not even ` +
          `"no responders", through ${nc.getServer()}: that server, or the servers its service instances ` +
          "are on, did not answer (frozen, overloaded, or the connection is down); its services are unknown this epoch",
      );
    }
    const infos = info.kind === "replies" ? info.replies : [];
    const statsList = stats.kind === "replies" ? stats.replies : [];
    const services = mergeInstances(infos, statsList);
    const data = Buffer.from(JSON.stringify({ account: account.name, data: { services } }));
    return {
      account: account.name,
      data,
      instances: services.length,
      duplicates:
        (info.kind === "replies" ? info.duplicates : 0) + (stats.kind === "replies" ? stats.duplicates : 0),
      bytes: [...infos, ...statsList].reduce((sum, r) => sum + r.data.byteLength, 0),
      ms: performance.now() - started,
      ...(connection ? { connection } : {}),
    };
  } catch (err) {
    return failed(err instanceof Error ? err.message : String(err));
  }
}

/** A request answered at all: by some instance, or by the server saying no one listens. */
function answered(result: GatherResult): boolean {
  return result.kind === "unsupported" || result.received > 0;
}

/**
 * One entry per instance id seen in either reply: INFO gives description and endpoint
 * metadata, STATS gives `started` and the figures. An instance that answered only one of
 * the two still appears, with what it said.
 */
export function mergeInstances(infos: readonly GatheredReply[], stats: readonly GatheredReply[]): Json[] {
  const merged = new Map<string, Json & { answered: string[] }>();
  const add = (request: string, reply: GatheredReply) => {
    const body = reply.envelope as Json;
    const previous = merged.get(reply.server);
    const endpoints = new Map<string, Json>();
    for (const e of [...asList(previous?.endpoints), ...asList(body.endpoints)]) {
      const name = typeof e.name === "string" ? e.name : "";
      endpoints.set(name, { ...endpoints.get(name), ...e });
    }
    const { type: _type, ...fields } = body;
    merged.set(reply.server, {
      ...previous,
      ...fields,
      endpoints: [...endpoints.values()],
      // Which requests the instance answered, so a missing half reads as unknown, not zero.
      answered: [...(previous?.answered ?? []), request],
    });
  };
  for (const reply of infos) add("$SRV.INFO", reply);
  for (const reply of stats) add("$SRV.STATS", reply);
  return [...merged.values()].sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

function asList(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((v): v is Json => typeof v === "object" && v !== null) : [];
}
