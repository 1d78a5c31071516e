import type { NatsConnection } from "@nats-io/nats-core";
import { ScrapePublisher } from "../bus/index.ts";
import type { Logger } from "../lib/index.ts";
import { systemAssets } from "../protocol/index.ts";

/**
 * How long an epoch's publishes wait out a scrape stream without a leader before the
 * epoch is given up. A leader election takes a few seconds (the audit measured 3 to 5 s
 * on a 3-node 2.9.10 sink); within the stream's 2-minute duplicate window, so a message
 * published twice is stored once.
 */
export const PUBLISH_RETRY_MS = 30_000;

/**
 * What may keep an external sink (sink.url) from storing the scrape stream's messages.
 * natsmon cannot see its servers' disks, so an election is one cause among others, and the
 * places to look are named.
 */
export function externalSinkCauses(systemId: string): string {
  const stream = systemAssets(systemId).scrapeStream;
  return (
    "the external sink's JetStream does not store them: a JetStream leader election under way, the sink's " +
    "storage full, or JetStream disabled on the sink after a storage failure (natsmon cannot see an external " +
    `sink's disks); check the sink servers' logs and the stream's leader with \`nats stream info ${stream}\` ` +
    "or the servers' JSZ"
  );
}

/**
 * The scrape side's publisher to the scrape stream, riding out a stream that does not take
 * messages for PUBLISH_RETRY_MS, and logging why: the embedded sink's full disk when that is
 * known, the causes an external sink may have, else a missing JetStream leader.
 */
export function scrapePublisher(options: {
  sink: NatsConnection;
  systemId: string;
  /** True for sink.url, false for the embedded server. */
  externalSink: boolean;
  /** Why the sink does not store messages, when its storage is known to be the reason. */
  sinkFault?: () => string | undefined;
  signal: AbortSignal;
  log: Logger;
}): ScrapePublisher {
  const { log } = options;
  const causes = options.externalSink ? externalSinkCauses(options.systemId) : undefined;
  const fault = () => options.sinkFault?.() ?? causes;
  return new ScrapePublisher(options.sink, options.systemId, {
    forMs: PUBLISH_RETRY_MS,
    signal: options.signal,
    explain: fault,
    onRetry: (subject, cause) => {
      const fields = { subject, err: cause.message, retry_for_ms: PUBLISH_RETRY_MS };
      const known = options.sinkFault?.();
      if (known) {
        log.error(fields, `the scrape stream is not taking messages: ${known}; retrying`);
      } else if (causes) {
        log.warn(fields, `the scrape stream is not taking messages: ${causes}; retrying`);
      } else {
        log.warn(
          fields,
          "the scrape stream is not taking messages (no JetStream leader: an election, or its servers down); retrying",
        );
      }
    },
  });
}
