/**
 * What the catalog side logs of its commit consumer's pull (consumeCommits' onStatus): a
 * consumer that stops answering once until it answers again, one made again, a missing
 * stream, and an unreadable marker set aside (counted). Split from catalog-side.ts.
 */
import { availableParallelism, loadavg } from "node:os";
import type { CommitConsumerEvent } from "../bus/index.ts";
import type { Logger } from "../lib/index.ts";

export function commitConsumerStatusLog(options: {
  log: Logger;
  /** Why the sink does not store messages, when its storage is known to be the reason. */
  sinkFault: () => string | undefined;
  /** Counts an unreadable marker set aside, at its stream sequence. */
  setAside: (seq: number) => void;
}): (event: CommitConsumerEvent) => void {
  const { log } = options;
  let unanswered: number | undefined;
  return ({ kind, detail }) => {
    if (kind === "unanswered") {
      if (unanswered !== undefined) return;
      unanswered = Date.now();
      const fault = options.sinkFault();
      log[fault ? "error" : "warn"](
        // The load beside the CPUs tells a busy machine from a sink that does not answer.
        { reason: detail, load_1m: Math.round(loadavg()[0]! * 100) / 100, cpus: availableParallelism() },
        fault
          ? `the scrape stream's consumer is not answering: ${fault}; pulling again`
          : "the scrape stream's consumer is not answering (no JetStream leader answers for it: a sink server down, " +
              "a leader election under way, or the sink's storage full or its JetStream disabled after a storage failure; " +
              "the sink servers' logs and `nats consumer info` on the scrape stream say which; or this node too busy to " +
              "read the consumer's heartbeats in time, on a machine short of CPU, which its load average shows); pulling again",
      );
    } else if (kind === "pulling") {
      if (unanswered === undefined) return;
      log.info({ after_ms: Date.now() - unanswered }, "the scrape stream's consumer answers again");
      unanswered = undefined;
    } else if (kind === "consumer-gone") {
      log.warn({ reason: detail }, "the catalog's consumer of the scrape stream is missing; making it again");
    } else if (kind === "consumer-made") {
      log.info({ consumer: detail }, "the catalog's consumer of the scrape stream is made again");
    } else if (kind === "marker-unreadable") {
      options.setAside(Number(detail));
      log.error(
        { seq: Number(detail) },
        "a commit marker in the scrape stream is unreadable (not a marker's JSON): set aside, not folded; read it with `nats stream get` (the seq) to see what wrote it to the scrape stream's commit subject",
      );
    } else {
      log.error(
        { reason: detail },
        kind === "stream-gone"
          ? "the scrape stream is missing: nothing can be folded until a scrape node of this system makes it again (start or restart one)"
          : "the catalog's consumer of the scrape stream is missing and could not be made again; restart the node",
      );
    }
  };
}
