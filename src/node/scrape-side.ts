import type { NatsConnection } from "@nats-io/nats-core";
import { connectNats, ScrapePublisher, type ConnectTarget } from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import type { Logger } from "../lib/index.ts";
import { startScraper, type ScrapeFaults, type Scraper } from "../scrape/index.ts";

export interface ScrapeSide extends AsyncDisposable {
  readonly scraper: Scraper;
}

/**
 * ① The scrape side of one system: a connection to the monitored system's system account
 * (or the sink's own, when `nats` is not configured) and the scraper writing epochs to
 * the scrape stream on the sink.
 */
export async function startScrapeSide(options: {
  sink: NatsConnection;
  sinkSystem: ConnectTarget | undefined;
  system: SystemConfig;
  nodeId: string;
  log: Logger;
  faults?: ScrapeFaults;
}): Promise<ScrapeSide> {
  const { system, log } = options;
  const target = system.nats ?? options.sinkSystem;
  if (!target) {
    throw new Error(
      `system ${system.id}: set system.nats (url and system-account credentials) to say what to monitor; ` +
        "only the embedded sink can be monitored without it",
    );
  }
  const monitored = await connectNats(target, `natsmon ${options.nodeId} scrape ${system.id}`);
  const scraper = startScraper({
    systemId: system.id,
    monitored,
    sink: new ScrapePublisher(options.sink, system.id),
    config: system.scraper,
    log,
    ...(options.faults ? { faults: options.faults } : {}),
  });
  return {
    scraper,
    async [Symbol.asyncDispose]() {
      await scraper[Symbol.asyncDispose]();
      await monitored.drain().catch(() => undefined);
    },
  };
}
