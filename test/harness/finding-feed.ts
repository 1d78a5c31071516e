import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { systemSubject } from "../../src/protocol/index.ts";
import { waitFor } from "./wait-for.ts";

/** A finding transition as a subscriber receives it (spec: Finding transition). */
export interface TransitionMessage {
  readonly code: string;
  readonly entity_type: string;
  readonly entity_pk: number;
  readonly entity_name: string;
  readonly entity_key?: string;
  readonly status: "firing" | "resolved" | "changed";
  readonly severity: "info" | "warning" | "critical";
  readonly prev_severity?: string;
  readonly starts_at: string;
  readonly ends_at?: string;
}

export interface ReceivedTransition {
  readonly subject: string;
  readonly transition: TransitionMessage;
}

/** Everything published on a system's `feed.finding.>`, in arrival order, from subscription on. */
export interface FindingFeed extends AsyncDisposable {
  readonly received: readonly ReceivedTransition[];
  /** Waits for a transition received at index `from` or later that matches. */
  next(
    match: (t: TransitionMessage, subject: string) => boolean,
    options?: { from?: number; timeoutMs?: number; message?: string },
  ): Promise<ReceivedTransition>;
}

export function subscribeFindingFeed(nc: NatsConnection, systemId: string): FindingFeed {
  const received: ReceivedTransition[] = [];
  const sub: Subscription = nc.subscribe(systemSubject(systemId, "feed.finding.>"), {
    callback: (err, msg) => {
      if (!err) received.push({ subject: msg.subject, transition: msg.json<TransitionMessage>() });
    },
  });
  return {
    received,
    next: (match, options = {}) =>
      waitFor(() => received.slice(options.from ?? 0).find((r) => match(r.transition, r.subject)), {
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 100,
        message: options.message ?? "a finding transition",
      }),
    async [Symbol.asyncDispose]() {
      sub.unsubscribe();
      await nc.flush();
    },
  };
}

/** `<status>.<severity>.<code>` of a transition subject, for compact assertions. */
export function transitionTail(subject: string): string {
  return subject.split(".").slice(-3).join(".");
}
