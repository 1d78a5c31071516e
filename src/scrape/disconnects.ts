/**
 * Disconnect history: every client disconnect advisory the monitored system sends
 * (`$SYS.ACCOUNT.<account>.DISCONNECT`, received through the system account) is counted in
 * fixed time buckets by account, reason and server. A bucket closes on the clock; when it
 * holds any disconnects it is published (feed.disconnect) and kept for the history window.
 * Buckets are aligned to multiples of their length since the Unix epoch, and an advisory
 * counts in the bucket in which it arrives (server clocks are not trusted to agree).
 * The history lives in memory: a restarted scrape side starts a new one.
 */
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import type { Logger } from "../lib/index.ts";
import {
  MAX_DISCONNECT_GROUPS,
  type DisconnectBucket,
  type DisconnectGroup,
  type DisconnectHistoryReply,
} from "../protocol/index.ts";

export const DISCONNECT_SUBJECT = "$SYS.ACCOUNT.*.DISCONNECT";

export interface DisconnectTrackerOptions {
  readonly systemId: string;
  readonly monitored: NatsConnection;
  readonly bucketMs: number;
  readonly historyMs: number;
  /** Called with each closed, non-empty bucket. */
  readonly publish: (bucket: DisconnectBucket) => void;
  readonly log: Logger;
  readonly now?: () => number;
}

export interface DisconnectTracker extends AsyncDisposable {
  /** Closed buckets from `since` (ms), oldest first, at most the newest `limit`. */
  history(since?: number, limit?: number): DisconnectHistoryReply;
}

interface Advisory {
  server?: { name?: unknown };
  client?: { acc?: unknown };
  reason?: unknown;
  sent?: { msgs?: unknown; bytes?: unknown };
  received?: { msgs?: unknown; bytes?: unknown };
}

class OpenBucket {
  readonly start: number;
  readonly groups = new Map<string, DisconnectGroup>();
  total = 0;

  constructor(start: number) {
    this.start = start;
  }

  add(advisory: Advisory, subjectAccount: string): void {
    const account = typeof advisory.client?.acc === "string" ? advisory.client.acc : subjectAccount;
    const reason = typeof advisory.reason === "string" && advisory.reason ? advisory.reason : "unknown";
    const server = typeof advisory.server?.name === "string" ? advisory.server.name : "unknown";
    const key = `${account}\u0000${reason}\u0000${server}`;
    let group = this.groups.get(key);
    if (!group) {
      group = {
        account,
        reason,
        server,
        count: 0,
        sent_msgs: 0,
        sent_bytes: 0,
        received_msgs: 0,
        received_bytes: 0,
      };
      this.groups.set(key, group);
    }
    group.count++;
    group.sent_msgs += num(advisory.sent?.msgs);
    group.sent_bytes += num(advisory.sent?.bytes);
    group.received_msgs += num(advisory.received?.msgs);
    group.received_bytes += num(advisory.received?.bytes);
    this.total++;
  }

  close(systemId: string, bucketMs: number): DisconnectBucket {
    const sorted = [...this.groups.values()].sort(
      (a, b) =>
        b.count - a.count ||
        a.account.localeCompare(b.account) ||
        a.reason.localeCompare(b.reason) ||
        a.server.localeCompare(b.server),
    );
    const kept = sorted.slice(0, MAX_DISCONNECT_GROUPS);
    const other = sorted.slice(MAX_DISCONNECT_GROUPS).reduce((n, g) => n + g.count, 0);
    return {
      system_id: systemId,
      start: new Date(this.start).toISOString(),
      end: new Date(this.start + bucketMs).toISOString(),
      total: this.total,
      groups: kept.map((g) => ({ ...g })),
      ...(other > 0 ? { other } : {}),
    };
  }
}

export function startDisconnectTracker(options: DisconnectTrackerOptions): DisconnectTracker {
  const { systemId, bucketMs, historyMs, log } = options;
  const now = options.now ?? Date.now;
  const startOf = (t: number) => Math.floor(t / bucketMs) * bucketMs;
  let open = new OpenBucket(startOf(now()));
  const closed: DisconnectBucket[] = [];

  const roll = () => {
    const start = startOf(now());
    if (start === open.start) return;
    if (open.total > 0) {
      const bucket = open.close(systemId, bucketMs);
      closed.push(bucket);
      try {
        options.publish(bucket);
      } catch (err) {
        log.warn(
          { err, start: bucket.start },
          "could not publish a disconnect bucket; it stays in the history",
        );
      }
    }
    open = new OpenBucket(start);
    const oldest = start - historyMs;
    while (closed.length > 0 && Date.parse(closed[0]!.start) < oldest) closed.shift();
  };

  const sub: Subscription = options.monitored.subscribe(DISCONNECT_SUBJECT, {
    callback: (err, msg) => {
      if (err) return;
      roll();
      try {
        open.add(msg.json<Advisory>(), msg.subject.split(".")[2] ?? "unknown");
      } catch {
        log.debug({ subject: msg.subject }, "unreadable disconnect advisory dropped");
      }
    },
  });
  // Close each bucket at its end even when no advisory comes to roll it.
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(
      () => {
        roll();
        schedule();
      },
      startOf(now()) + bucketMs - now() + 5,
    );
  };
  schedule();

  return {
    history(since, limit) {
      roll();
      let buckets = closed.filter((b) => since === undefined || Date.parse(b.end) > since);
      if (limit !== undefined) buckets = buckets.slice(-limit);
      return {
        system_id: systemId,
        bucket_seconds: bucketMs / 1000,
        history_seconds: historyMs / 1000,
        buckets,
        current: open.close(systemId, bucketMs),
      };
    },
    [Symbol.asyncDispose]() {
      clearTimeout(timer);
      sub.unsubscribe();
      return Promise.resolve();
    },
  };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
