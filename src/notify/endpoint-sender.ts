import type { NatsConnection } from "@nats-io/nats-core";
import { setTimeout as sleep } from "node:timers/promises";
import type { EndpointConfig } from "../config/index.ts";
import type { DeliveredAlertEntry } from "../protocol/index.ts";
import type { Logger } from "../lib/index.ts";
import { deliveryRequests, type BodyContext, type DeliveryRequest } from "./bodies.ts";
import { forgetOtherReceivers, openDeliveredStore } from "./delivered-store.ts";
import { endpointId } from "./delivery-log.ts";
import { latestOutboxEntries, readOutbox, OUTBOX_ACK_WAIT_MS, type HeldEntry } from "./outbox.ts";
import { endpointFilterDigest, endpointSends, receiverDigest, type DisabledChecks } from "./patterns.ts";
import { planDelivery, resendAlerts, type KeyedEntry } from "./plan-delivery.ts";
import { deliver, type AttemptResult, type RecordAttempt } from "./send.ts";
import { failureAdvice } from "./failure-advice.ts";
import { DEFAULT_FRESH_EPOCH_WAIT_MS, startFirstDeliveryGate, type FreshEpochs } from "./first-delivery.ts";

/** At most this many outbox entries go into one delivery. */
const MAX_BATCH = 1000;
/** How long a batch waits for the rest of an epoch's entries once the consumer says more are pending. */
const LINGER_MS = 50;

export interface SenderTiming {
  /** First wait before a failed delivery is tried again; it doubles up to `retryMaxMs` (spec: Limits). */
  readonly retryFirstMs: number;
  readonly retryMaxMs: number;
  /** Alertmanager endpoints get every active alert this often, and once at start (spec: Limits). */
  readonly resendEveryMs: number;
  /** Waits between the attempts of one delivery. */
  readonly attemptWaitsMs?: readonly number[];
  readonly attemptTimeoutMs?: number;
  /**
   * How long a receiver that knows no alert waits at most for an epoch diffed since start
   * before its first delivery (first-delivery.ts); the node makes it a few scrape intervals.
   */
  readonly freshEpochWaitMs?: number;
}

export const DEFAULT_SENDER_TIMING: SenderTiming = {
  retryFirstMs: 2_000,
  retryMaxMs: 60_000,
  resendEveryMs: 60_000,
};

/**
 * ⑥ One endpoint's sender: reads its durable consumer of the outbox, keeps what the endpoint
 * wants, compares with what its receiver knows, and delivers the difference. A failed delivery
 * is retried (whole batch, newer changes merged in behind it, only each finding's latest
 * state) from 2 s growing to once a minute until it succeeds; only then are the entries acked
 * and the receiver's known state saved. Each endpoint has its own sender, so a slow one holds
 * up no other, and nothing here ever waits on collection.
 */
export async function startEndpointSender(options: {
  nc: NatsConnection;
  nodeId: string;
  endpoint: EndpointConfig;
  /** Checks turned off per system: their alerts are neither sent nor resent. */
  disabledChecks: DisabledChecks;
  body: BodyContext;
  record: RecordAttempt;
  userAgent: string;
  log: Logger;
  timing?: SenderTiming;
  /** Systems with an epoch diffed since start; without it no first delivery is held back. */
  fresh?: FreshEpochs;
  /** The systems whose catalog role this node holds that the endpoint sends for (their delivered-state buckets exist). */
  systems: readonly string[];
}): Promise<AsyncDisposable> {
  const { endpoint, body } = options;
  const timing = options.timing ?? DEFAULT_SENDER_TIMING;
  const id = endpointId(endpoint.name);
  const log = options.log.child({ endpoint: endpoint.name, endpoint_type: endpoint.type });
  // Only systems whose delivered state this sender keeps: the node's catalog sides write no other.
  const sends = (system: string, code: string) =>
    options.systems.includes(system) && endpointSends(endpoint, options.disabledChecks, system, code);
  const store = await openDeliveredStore(options.nc, options.nodeId, id, options.systems, log);
  const known = await store.load();
  await forgetOtherReceivers(store, known, options.systems, receiverDigest(endpoint), log);
  // A receiver told nothing yet gets its first delivery from a firing set of now (see gate below).
  const knowsNothing = known.size === 0;
  // Alerts the endpoint no longer wants (its patterns or systems changed, or the check was
  // disabled) are forgotten: no resolve will follow them (baseline rule 3), none is resent,
  // and an Alertmanager lets them expire at the endsAt it was last given.
  const unwanted = [...known].filter(([, a]) => !sends(a.system, a.code)).map(([k]) => k);
  if (unwanted.length > 0) {
    await store.apply(new Map(), new Set(unwanted));
    for (const key of unwanted) known.delete(key);
    log.info(
      { forgotten: unwanted.length },
      "alerts the endpoint no longer subscribes to, or of disabled checks, are forgotten",
    );
  }
  const filter = endpointFilterDigest(endpoint, options.disabledChecks);
  // Known alerts whose latest outbox state says otherwise have a change on its way (unacked,
  // or held by a sender that died until the server hands it out again): resends leave them
  // out until the change itself is taken up (spec: newer changes wait behind a failed one).
  const stale =
    endpoint.type === "alertmanager"
      ? await changingKnown(options.nc, options.nodeId, known, endpoint.type, sends)
      : new Set<string>();
  const reader = await readOutbox(options.nc, options.nodeId, id, filter, (subject) =>
    log.warn({ subject }, "outbox entry is not readable; dropped"),
  );
  if (reader.made)
    log.info({ filter }, "the endpoint reads every finding's latest state: new, or its filter changed");
  const stop = new AbortController();
  const signal = stop.signal;

  // The pump moves entries from the consumer into `queue`; the loop takes batches from it.
  const queue: HeldEntry[] = [];
  let lastPending = 0;
  let wake: () => void = () => {};
  const pump = (async () => {
    for await (const entry of reader.entries) {
      queue.push(entry);
      lastPending = entry.pending;
      wake();
    }
  })().catch((err: unknown) => log.error({ err }, "outbox reader stopped"));
  const arrival = (ms?: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        wake = () => {};
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      wake = done;
      // An abort event fires once: a wait begun after the stop would otherwise last its time.
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });

  // A failed change waits out its backoff here; a resend that gets through cuts it short.
  let retryNow: () => void = () => {};
  /** Resolves after `ms`, on stop, or early (with true) when a resend cuts the wait short. */
  const backoff = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const done = (cut: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", stopped);
        retryNow = () => {};
        resolve(cut);
      };
      const stopped = () => done(false);
      const timer = setTimeout(stopped, ms);
      retryNow = () => done(true);
      if (signal.aborted) stopped();
      else signal.addEventListener("abort", stopped, { once: true });
    });

  // One request at a time per endpoint; a resend sent while a change waits leaves out every
  // alert the change would alter, so it never overtakes a change.
  let lock: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = lock.then(work);
    lock = run.catch(() => undefined);
    return run;
  };
  const send = async (
    requests: readonly DeliveryRequest[],
    kind: "change" | "resend",
  ): Promise<Failure | undefined> => {
    for (const request of requests) {
      const result = await deliver(endpoint, request, {
        kind,
        record: options.record,
        userAgent: options.userAgent,
        signal,
        ...(timing.attemptWaitsMs ? { waitsMs: timing.attemptWaitsMs } : {}),
        ...(timing.attemptTimeoutMs ? { timeoutMs: timing.attemptTimeoutMs } : {}),
      });
      if (!result.ok) {
        const last = result.last;
        return { error: `${"error" in last ? last.error : "failed"} (${result.attempts} attempt(s))`, last };
      }
    }
    return undefined;
  };

  // Held messages say `working` so the server does not hand them out again while they wait.
  let batch: HeldEntry[] = [];
  const keepAlive = setInterval(() => {
    for (const e of batch) e.working();
    for (const e of queue) e.working();
    for (const e of persisting) e.working();
  }, OUTBOX_ACK_WAIT_MS / 3);

  /**
   * Adds queued entries to the batch; a newer entry of a finding replaces (and acks) the older,
   * as does one the gate knows superseded. A held first delivery takes the whole queue in.
   */
  const merge = () => {
    const superseded = (e: HeldEntry) => gate?.superseded(e) === true;
    for (const e of batch) if (superseded(e)) e.ack();
    const byKey = new Map(batch.filter((e) => !superseded(e)).map((e) => [e.key, e]));
    const holding = gate !== undefined && !gate.expired;
    while (queue.length > 0 && (byKey.size < MAX_BATCH || holding)) {
      const next = queue.shift()!;
      // From here the batch (or the ack of an entry the endpoint does not want) speaks for it.
      stale.delete(next.key);
      if (!sends(next.entry.system, next.entry.transition.code) || superseded(next)) {
        next.ack();
        continue;
      }
      const older = byKey.get(next.key);
      if (older) {
        byKey.delete(next.key);
        older.ack();
      }
      byKey.set(next.key, next);
    }
    batch = [...byKey.values()].sort((a, b) => a.seq - b.seq);
  };

  /** What of the batch may go now: all of it, unless the first delivery is held back. */
  const ready = (): HeldEntry[] =>
    gate === undefined ? batch : batch.filter((e) => gate.opens(e)).slice(0, MAX_BATCH);

  /** Sends what the ready entries change for the receiver; on success records it and acks them. */
  const deliverBatch = (): Promise<Failure | undefined> =>
    // The known state changes inside the lock, so a resend never sees a delivered change as pending.
    exclusive(async () => {
      const sending = ready();
      const plan = planDelivery(sending, known, endpoint.type);
      const requests = deliveryRequests(endpoint.type, endpoint.name, plan.alerts, body, new Date());
      const failure = requests.length === 0 ? undefined : await send(requests, "change");
      if (failure !== undefined) return failure;
      for (const [key, value] of plan.put) known.set(key, value);
      for (const key of plan.remove) known.delete(key);
      if (plan.alerts.length > 0) log.info({ alerts: plan.alerts.length }, "notification delivered");
      persist(plan, sending);
      const sent = new Set(sending);
      batch = batch.filter((e) => !sent.has(e));
      return undefined;
    });

  /**
   * Saves what the receiver now knows, then acks the batch, in delivery order, while the next
   * batch is already being sent (the next plan reads the in-memory state). A crash before the
   * acks redelivers the entries; against the saved state they are sent again (at least once),
   * never lost. A failed save is retried; its entries stay unacked and say `working`.
   */
  const persisting = new Set<HeldEntry>();
  let saved: Promise<void> = Promise.resolve();
  const persist = (plan: ReturnType<typeof planDelivery>, entries: readonly HeldEntry[]) => {
    for (const e of entries) persisting.add(e);
    saved = saved.then(async () => {
      for (let wait = timing.retryFirstMs; ; wait = Math.min(wait * 2, timing.retryMaxMs)) {
        try {
          await store.apply(plan.put, plan.remove);
          break;
        } catch (err) {
          // Stopping leaves the entries unacked: the next start sends them again.
          if (signal.aborted) return;
          log.warn({ err, retry_in_ms: wait }, "saving what the receiver knows failed; retrying");
          await sleep(wait, undefined, { signal }).catch(() => undefined);
        }
      }
      for (const e of entries) {
        e.ack();
        persisting.delete(e);
      }
    });
  };

  // Made before the loop starts: its callbacks wake the loop and read the held entries.
  const gate =
    knowsNothing && options.fresh
      ? startFirstDeliveryGate({
          nc: options.nc,
          nodeId: options.nodeId,
          fresh: options.fresh,
          waitMs: timing.freshEpochWaitMs ?? DEFAULT_FRESH_EPOCH_WAIT_MS,
          log,
          held: () => [...batch, ...queue],
          onChange: () => wake(),
        })
      : undefined;

  const loop = (async () => {
    while (!signal.aborted) {
      if (queue.length === 0) await arrival();
      // The rest of an epoch is usually a few milliseconds behind its first entry.
      while (!signal.aborted && lastPending > 0 && queue.length < MAX_BATCH) {
        const before = queue.length;
        await arrival(LINGER_MS);
        if (queue.length === before) break;
      }
      if (signal.aborted) break;
      merge();
      let retryMs = timing.retryFirstMs;
      while (ready().length > 0 && !signal.aborted) {
        const failure = await deliverBatch().catch((err: unknown): Failure => ({ error: describe(err) }));
        // Stopped mid-delivery: the batch stays unacked for the next start; no retry to wait for.
        if (failure === undefined || signal.aborted) break;
        const { fields, nextStep } = advise(endpoint, failure);
        log.warn(
          { error: failure.error, ...fields, retry_in_ms: retryMs },
          `notification delivery failed; retrying${nextStep}`,
        );
        // Cut short by a resend that got through: the endpoint is up, so the waits start over.
        const cut = await backoff(retryMs);
        retryMs = cut ? timing.retryFirstMs : Math.min(retryMs * 2, timing.retryMaxMs);
        merge();
      }
    }
  })().catch((err: unknown) => log.error({ err }, "notification sender stopped"));

  // Alertmanager endpoints: every active alert at start and each minute, ending 4 minutes
  // ahead; an alert with a change waiting (a resolve, a new severity) is left to that change,
  // which goes at once once the resend shows the endpoint is up.
  const resend = () =>
    exclusive(async () => {
      const pending = [...batch, ...queue].filter((e) => sends(e.entry.system, e.entry.transition.code));
      const active = resendAlerts(known, planDelivery(pending, known, endpoint.type), stale, sends);
      const requests = deliveryRequests(endpoint.type, endpoint.name, active, body, new Date());
      const failure = await send(requests, "resend");
      if (failure) {
        const { fields, nextStep } = advise(endpoint, failure);
        log.warn(
          { error: failure.error, ...fields },
          `active alerts could not be sent again; next try in a minute${nextStep}`,
        );
      } else if (requests.length > 0) retryNow();
    }).catch((err: unknown) => log.error({ err }, "resend failed"));
  let resendTimer: NodeJS.Timeout | undefined;
  let resending: Promise<unknown> = Promise.resolve();
  if (endpoint.type === "alertmanager") {
    resending = resend();
    resendTimer = setInterval(() => {
      resending = resend();
    }, timing.resendEveryMs);
  }

  log.info({ known: known.size }, "notification endpoint ready");
  return {
    async [Symbol.asyncDispose]() {
      stop.abort();
      gate?.[Symbol.dispose]();
      clearInterval(keepAlive);
      clearInterval(resendTimer);
      await reader.stop();
      await pump;
      await loop;
      await saved;
      // Unsent entries go back now, so the next start does not wait out the ack timeout.
      for (const e of [...batch, ...queue]) e.release();
      await resending;
      await lock;
    },
  };
}

/** Why a delivery failed: its error, and its last attempt when one was made (not when it threw). */
interface Failure {
  readonly error: string;
  readonly last?: AttemptResult;
}

/** A failure warning's fields and next step (after a colon), when an attempt was made. */
function advise(endpoint: EndpointConfig, failure: Failure) {
  if (!failure.last) return { fields: {}, nextStep: "" };
  const advice = failureAdvice(endpoint, failure.last);
  return { fields: advice.fields, nextStep: `: ${advice.nextStep}` };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Keys of known alerts whose latest outbox entry would change what the receiver knows. */
async function changingKnown(
  nc: NatsConnection,
  nodeId: string,
  known: ReadonlyMap<string, DeliveredAlertEntry>,
  type: EndpointConfig["type"],
  sends: (system: string, code: string) => boolean,
): Promise<Set<string>> {
  if (known.size === 0) return new Set();
  const entries: KeyedEntry[] = [];
  for await (const e of latestOutboxEntries(nc, nodeId)) {
    if (known.has(e.key) && sends(e.entry.system, e.entry.transition.code)) entries.push(e);
  }
  const plan = planDelivery(entries, known, type);
  return new Set([...plan.put.keys(), ...plan.remove]);
}
