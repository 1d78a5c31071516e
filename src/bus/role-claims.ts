import { setTimeout as sleep } from "node:timers/promises";
import { errors, nuid, type NatsConnection } from "@nats-io/nats-core";
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { isToken, type Role } from "../domain/index.ts";
import { claimProbeSubject, ROLE_CLAIMS_BUCKET, roleClaimKey, type RoleClaim } from "../protocol/index.ts";
import { settlesWithin, type Logger } from "../lib/index.ts";
import { claimsBucketConfig, ensureStream } from "./assets.ts";
import {
  afterWaiting,
  claimStep,
  lapseCause,
  refreshStep,
  type ClaimSeen,
  type LapseCause,
  type Liveness,
} from "./claim-rules.ts";
import type { ServerRestart } from "./embedded-supervisor.ts";
import { passesByWaiting } from "./transient.ts";

/** What asking for a role gave. */
export type ClaimResult =
  /** This node serves the role; `from` is the holder it took over from, one that no longer ran. */
  | { readonly held: true; readonly from: RoleClaim | undefined }
  /** Another live node serves it. */
  | { readonly held: false; readonly holder: RoleClaim };

/** The role claims of one running node. Disposing releases every claim it still holds. */
export interface RoleClaims extends AsyncDisposable {
  /** This process's claim value (its instance is fresh at every start). */
  readonly own: RoleClaim;
  claim(systemId: string, role: Role): Promise<ClaimResult>;
  /**
   * True while this node still holds the role, read from the sink now. A node stalled past
   * its claim's lapse may have lost the role before a refresh could tell it: asked before an
   * epoch leaves the node (the commit marker, the feed, the marker's ack). A role found lost
   * goes the way a refused refresh goes (onLost). A sink that does not answer says nothing
   * new: true, as the refresh goes on trying.
   */
  confirm(systemId: string, role: Role): Promise<boolean>;
}

/** How often a holder rewrites its claims; the bucket's max_age (10 s) is how long one survives without. */
export const CLAIM_REFRESH_MS = 2_000;
/** How long a holder has to answer "do you run?". */
const PROBE_TIMEOUT_MS = 2_000;
/** How long a stop waits to release its claims. */
const RELEASE_TIMEOUT_MS = 1_000;
/** How often the claim of a silent holder is looked at while waiting for it to lapse. */
const WAIT_POLL_MS = 1_000;
/** Steps before a claim that keeps changing hands is given up on (several nodes starting at once). */
const MAX_STEPS = 8;
/** How long a write to the bucket rides out a JetStream leader election. */
const TRANSIENT_FOR_MS = 30_000;

/**
 * Exclusive (system, role) claims on the sink, so that one live node serves each role of a
 * system on a bus: a key `<system_id>.<role>` in the MON_CLAIMS bucket, created only if
 * absent (JetStream's expected-last-subject-sequence makes it atomic: of two nodes starting
 * at once, one wins), rewritten by its holder every 2 s at the revision it last wrote, and
 * deleted when the holder stops. A node finding the key held asks the holder's process
 * whether it runs (claimProbeSubject): "no responders" means it does not, and the claim is
 * taken over at once; no answer means waiting until the claim lapses (bucket max_age) or
 * moves. A holder whose rewrite is refused and finds another node's claim has lost the role
 * and is told through `onLost`.
 */
export async function startRoleClaims(options: {
  nc: NatsConnection;
  replicas: number;
  holder: { nodeId: string; host: string; version: string };
  log: Logger;
  onLost: (systemId: string, role: Role, holder: RoleClaim | undefined) => void;
  /** When and why natsmon last restarted its embedded sink (EmbeddedSink.lastRestart), if it did. */
  sinkRestart?: () => ServerRestart | undefined;
  now?: () => Date;
}): Promise<RoleClaims> {
  const { nc, log } = options;
  const bucketConfig = await claimsBucketConfig(options.replicas);
  await ensureStream(await jetstreamManager(nc), bucketConfig);
  const lapseMs = bucketConfig.max_age / 1_000_000;
  const kv: KV = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
  const own: RoleClaim = {
    node_id: options.holder.nodeId,
    host: options.holder.host,
    instance: nuid.next(),
    version: options.holder.version,
    since: (options.now?.() ?? new Date()).toISOString(),
  };
  const value = JSON.stringify(own);
  // Answering before the first claim is written, so no node ever finds it and hears nothing.
  const probeSub = nc.subscribe(claimProbeSubject(own.node_id, own.instance), {
    callback: (err, msg) => {
      if (!err) msg.respond(value);
    },
  });
  await nc.flush();

  const read = async (key: string, once = false): Promise<ClaimSeen> => {
    const entry = once ? await kv.get(key) : await patiently(() => kv.get(key));
    if (!entry || entry.operation !== "PUT") return { kind: "free" };
    return { kind: "held", revision: entry.revision, claim: parseClaim(entry.string()) };
  };
  /** Writes the claim if the key is still at `revision` (0: absent); undefined when it is not. */
  const writeAt = (key: string, revision: number): Promise<number | undefined> =>
    patiently(() => (revision === 0 ? kv.create(key, value) : kv.update(key, value, revision))).catch(
      (err: unknown) => {
        if (isWrongSequence(err)) return undefined;
        throw err;
      },
    );
  const probe = async (holder: RoleClaim): Promise<Liveness> => {
    try {
      await nc.request(claimProbeSubject(holder.node_id, holder.instance), "", { timeout: PROBE_TIMEOUT_MS });
      return "answers";
    } catch (err) {
      return isNoResponders(err) ? "gone" : "silent";
    }
  };
  /** Waits on a silent holder until its claim lapses or moves, for at most the time it takes to lapse. */
  const waitOn = async (key: string, revision: number, holder: RoleClaim) => {
    log.info(
      { key, holder_node: holder.node_id, holder_host: holder.host, wait_ms: lapseMs },
      "the node holding this role does not answer; waiting for its claim to lapse",
    );
    const deadline = Date.now() + lapseMs + PROBE_TIMEOUT_MS;
    for (;;) {
      const next = afterWaiting(await read(key), revision, holder);
      if (next.kind !== "wait" || Date.now() > deadline) return next;
      await sleep(WAIT_POLL_MS);
    }
  };

  const held = new Map<
    string,
    {
      systemId: string;
      role: Role;
      revision: number;
      /** When a write of the claim was last stored. */
      refreshedAt: Date;
      /** When refreshes began to fail, while they do. */
      failingSince: Date | undefined;
    }
  >();
  let refreshTimer: NodeJS.Timeout | undefined;
  let refreshing: Promise<void> = Promise.resolve();
  /** Set by a stop: refreshes queued behind a sink that does not answer are skipped. */
  let stopping = false;
  const refresh = async (key: string) => {
    const entry = held.get(key);
    if (!entry) return;
    try {
      entry.revision = await kv.update(key, value, entry.revision);
      if (entry.failingSince) log.info({ key }, "the role claim is refreshed again");
      entry.failingSince = undefined;
      entry.refreshedAt = new Date();
      return;
    } catch (err) {
      if (!isWrongSequence(err)) {
        if (!entry.failingSince) {
          log.warn(
            { key, err: (err as Error).message, lapse_ms: lapseMs },
            "cannot refresh the role claim on the sink; retrying (it lapses if this lasts)",
          );
        }
        entry.failingSince ??= new Date();
        return;
      }
    }
    const step = refreshStep(await read(key), own.instance);
    let holder: RoleClaim | undefined;
    switch (step.kind) {
      case "adopt":
        entry.revision = step.revision;
        return;
      case "reclaim": {
        const revision = await writeAt(key, 0);
        if (revision !== undefined) {
          logLapse(key, lapseCause(entry.refreshedAt, entry.failingSince, options.sinkRestart?.(), lapseMs));
          entry.revision = revision;
          entry.refreshedAt = new Date();
          return;
        }
        // Another node claimed it in the meantime.
        const now = await read(key);
        holder = now.kind === "held" ? now.claim : undefined;
        break;
      }
      case "lost":
        holder = step.holder;
        break;
    }
    if (held.delete(key)) options.onLost(entry.systemId, entry.role, holder);
  };
  const logLapse = (key: string, cause: LapseCause) => {
    switch (cause.kind) {
      case "sink-restarted":
        // Expected after natsmon's own restart of the server, which it logged as an error.
        log.info(
          { key, restarted_at: cause.at.toISOString(), restart_cause: cause.cause },
          `the embedded bus was restarted at ${cause.at.toISOString()} (natsmon restarted its nats-server: ` +
            `${cause.cause}); the role claim lapsed while it was down; claimed again`,
        );
        return;
      case "sink-unanswered":
        log.warn(
          { key, failing_since: cause.since.toISOString() },
          `the role claim lapsed: the sink took none of its refreshes since ${cause.since.toISOString()}; claimed again`,
        );
        return;
      case "late":
        log.warn({ key }, "the role claim had lapsed (this node was late refreshing it); claimed again");
        return;
    }
  };
  const refreshAll = async () => {
    for (const key of [...held.keys()]) {
      if (stopping) return;
      await refresh(key).catch((err: unknown) =>
        log.warn({ key, err: (err as Error).message }, "cannot refresh the role claim; retrying"),
      );
    }
  };
  const hold = (key: string, systemId: string, role: Role, revision: number) => {
    held.set(key, { systemId, role, revision, refreshedAt: new Date(), failingSince: undefined });
    refreshTimer ??= setInterval(() => {
      refreshing = refreshing.then(refreshAll);
    }, CLAIM_REFRESH_MS);
  };

  return {
    own,
    async claim(systemId, role) {
      const key = roleClaimKey(systemId, role);
      // Creating first: the key is free in every start but a contended one.
      let seen: ClaimSeen = { kind: "free" };
      let liveness: Liveness | undefined;
      for (let steps = 0; steps < MAX_STEPS; steps++) {
        const step = claimStep(seen, own.instance, liveness);
        let revision: number | undefined;
        let from: RoleClaim | undefined;
        switch (step.kind) {
          case "create":
            revision = await writeAt(key, 0);
            break;
          case "adopt":
            revision = step.revision;
            break;
          case "take-over":
            revision = await writeAt(key, step.revision);
            from = step.from;
            break;
          case "probe":
            liveness = await probe(step.holder);
            continue;
          case "refuse":
            return { held: false, holder: step.holder };
          case "wait": {
            const next = await waitOn(key, step.revision, step.holder);
            if (next.kind === "refuse") return { held: false, holder: next.holder };
            break;
          }
        }
        if (revision !== undefined) {
          hold(key, systemId, role, revision);
          return { held: true, from };
        }
        seen = await read(key);
        liveness = undefined;
      }
      throw new Error(`the claim ${key} kept changing hands; is more than one node starting for it?`);
    },
    async confirm(systemId, role) {
      const key = roleClaimKey(systemId, role);
      if (!held.has(key)) return false;
      // One try: an epoch is not held up by a sink that is electing a leader.
      const seen = await read(key, true).catch(() => undefined);
      if (seen === undefined) return held.has(key);
      const step = refreshStep(seen, own.instance);
      if (step.kind !== "lost") return held.has(key);
      if (held.delete(key)) options.onLost(systemId, role, step.holder);
      return false;
    },
    async [Symbol.asyncDispose]() {
      clearInterval(refreshTimer);
      stopping = true;
      // A refresh in flight to a sink that does not answer only times out: not worth a longer stop.
      await settlesWithin(refreshing, RELEASE_TIMEOUT_MS);
      // Only a claim still at the revision this node wrote: never one another node holds now.
      // All at once and briefly: a Ctrl-C reaches the embedded server with natsmon (one process
      // group), so at a stop the sink may be gone already, and a claim lapses by itself anyway.
      await Promise.all(
        [...held].map(async ([key, { revision }]) => {
          const release = kv.delete(key, { previousSeq: revision }).then(
            () => undefined,
            (err: unknown) => (err instanceof Error ? err.message : String(err)),
          );
          const failed = (await settlesWithin(release, RELEASE_TIMEOUT_MS)) ? await release : "no answer";
          // Nothing to do about it: the next node takes the claim over once it lapses.
          if (failed !== undefined) {
            log.info(
              { key, err: failed },
              "the role claim was not released (the sink did not answer); it lapses by itself within seconds",
            );
          }
        }),
      );
      held.clear();
      probeSub.unsubscribe();
    },
  };
}

/** A claim value, when it has what a claim must: token ids (they go into subjects) and strings. */
function parseClaim(text: string): RoleClaim | undefined {
  try {
    const c = JSON.parse(text) as Partial<Record<keyof RoleClaim, unknown>>;
    if (typeof c.node_id !== "string" || !isToken(c.node_id)) return undefined;
    if (typeof c.instance !== "string" || !isToken(c.instance)) return undefined;
    return {
      node_id: c.node_id,
      instance: c.instance,
      host: typeof c.host === "string" ? c.host : "",
      version: typeof c.version === "string" ? c.version : "",
      since: typeof c.since === "string" ? c.since : "",
    };
  } catch {
    return undefined;
  }
}

function isWrongSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function isNoResponders(err: unknown): boolean {
  return (
    err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders())
  );
}

/** Runs `what`, retrying what a JetStream leader election explains, for a while. */
async function patiently<T>(what: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + TRANSIENT_FOR_MS;
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await what();
    } catch (err) {
      if (!passesByWaiting(err) || Date.now() > deadline) throw err;
      await sleep(wait);
    }
  }
}
