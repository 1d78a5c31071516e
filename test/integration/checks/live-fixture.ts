/**
 * Test input for the live check tests: a real nats-server 2.9.10 (one, or a cluster) with a
 * connection in the system account and one in APP, scraped with natsmon's own requests into
 * epochs that the catalog fixtures of check-harness.ts fold.
 *
 * One `close()` tears down in the one safe order: the connections, then the servers.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { ScrapeReply } from "../../../src/catalog/index.ts";
import type { Check } from "../../../src/checks/index.ts";
import { SOURCES } from "../../../src/scrape/index.ts";
import { startTestCluster, type TestCluster } from "../../harness/start-nats-cluster.ts";
import {
  APP_USER,
  SYS_USER,
  startTestServer,
  type ServerSpec,
  type TestAccount,
  type TestServer,
} from "../../harness/start-nats-server.ts";
import { scrapeOneEpoch } from "../catalog/live-scrape.ts";
import { runFixture } from "./check-harness.ts";

/** One epoch scraped now that expects every server of the fixture; folded 10 s after the one before. */
export interface LiveEpoch {
  readonly replies: ScrapeReply[];
  readonly marker: { servers_expected: string[] };
}

/** One epoch scraped now, folded at the time natsmon's scraper gave it (RFC 3339). */
export type TimedEpoch = LiveEpoch & { readonly at: string };

/** What `scrape` passes on to the scraper (the service accounts to ask, say). */
export type ScrapeOptions = NonNullable<Parameters<typeof scrapeOneEpoch>[2]>;

/** The connections and helpers every live fixture has, whatever servers it runs. */
export interface LiveFixture {
  /** In the system account: the monitor's connection, which scrapes. */
  readonly sys: NatsConnection;
  /** In APP: the test's client. */
  readonly app: NatsConnection;
  /**
   * A JetStream manager on `app` for setting up the test's assets. Its requests wait 30 s, not
   * the API's 5 s: creating replicated assets on a fresh cluster can take longer while the
   * other test files load both CPUs, and that is set-up, not what is tested.
   */
  jsm(): Promise<JetStreamManager>;
  /** One epoch of the fixture's sources, scraped now. */
  scrape(options?: ScrapeOptions): Promise<LiveEpoch>;
  /** One epoch of the fixture's sources, scraped now, to be folded at the time it was scraped. */
  scrapeTimed(): Promise<TimedEpoch>;
  /**
   * `check`'s rows over `epochs` epochs scraped now (one unless told), run as natsmon runs it:
   * an operational check over the last epoch, an optimization check over the window.
   */
  checkNow(
    check: Check,
    options?: { params?: Readonly<Record<string, number>>; epochs?: number },
  ): Promise<Record<string, unknown>[]>;
  /** Closes the connections, then stops the servers and removes their files. */
  close(): Promise<void>;
}

export interface LiveServer extends LiveFixture {
  readonly server: TestServer;
}

export interface LiveCluster extends LiveFixture {
  readonly cluster: TestCluster;
}

/** Sources by name, as natsmon's scraper knows them. */
interface SourceOptions {
  readonly sources: readonly string[];
}

/** A single server with JetStream, SYS and APP (and `extraAccounts`); `extraConfig` is appended. */
export async function startLiveServer(
  name: string,
  options: SourceOptions & { extraAccounts?: readonly TestAccount[]; extraConfig?: string },
): Promise<LiveServer> {
  const { sources, ...serverOptions } = options;
  const server = await startTestServer(name, serverOptions);
  return { ...(await connectTo(server, [server.url], [name], sources)), server };
}

/**
 * A cluster n1..n`size` (3 unless told) with JetStream and a system account; both connections
 * go to the nodes named in `connectTo` (all unless told).
 */
export async function startLiveCluster(
  options: SourceOptions & {
    size?: number;
    jetstreamMax?: ServerSpec["jetstreamMax"];
    connectTo?: readonly string[];
  },
): Promise<LiveCluster> {
  const cluster = await startTestCluster({ size: options.size, jetstreamMax: options.jetstreamMax });
  const names = cluster.nodes.map((n) => n.name);
  const wanted = options.connectTo ?? names;
  const urls = cluster.nodes.filter((n) => wanted.includes(n.name)).map((n) => n.url);
  return { ...(await connectTo(cluster, urls, names, options.sources)), cluster };
}

/**
 * Connects both users to `urls` of the `running` servers named `names`, which scrape
 * `sourceNames`; on a failure, closes what was opened and stops the servers.
 */
async function connectTo(
  running: AsyncDisposable,
  urls: string[],
  names: readonly string[],
  sourceNames: readonly string[],
): Promise<LiveFixture> {
  const scraped = SOURCES.filter((s) => sourceNames.includes(s.name));
  let sys: NatsConnection | undefined;
  let app: NatsConnection | undefined;
  const close = async () => {
    await app?.close();
    await sys?.close();
    await running[Symbol.asyncDispose]();
  };
  try {
    sys = await connect({ servers: urls, user: SYS_USER.user, pass: SYS_USER.password });
    app = await connect({ servers: urls, user: APP_USER.user, pass: APP_USER.password });
  } catch (err) {
    await close();
    throw err;
  }
  const monitor = sys;
  const expected = (): LiveEpoch["marker"] => ({ servers_expected: [...names] });
  const scrape = async (options: ScrapeOptions = {}) => {
    const { replies } = await scrapeOneEpoch(monitor, scraped, options);
    return { replies, marker: expected() };
  };
  return {
    sys: monitor,
    app,
    jsm: () => jetstreamManager(app, { timeout: 30_000 }),
    scrape,
    async scrapeTimed() {
      const { replies, marker } = await scrapeOneEpoch(monitor, scraped);
      return { replies, at: new Date(marker.epoch).toISOString(), marker: expected() };
    },
    async checkNow(check, { params = {}, epochs = 1 } = {}) {
      const scrapedNow: LiveEpoch[] = [];
      for (let i = 0; i < epochs; i++) scrapedNow.push(await scrape());
      return runFixture(check, scrapedNow, params);
    },
    close,
  };
}
