/**
 * What the scraper asks every monitored server, once per epoch. The PING form is answered
 * by every server sharing the system account; a server too old for a request simply does
 * not answer it (no responders when none can), so `since` tells a missing reply from an
 * unsupported one.
 */
export interface Source {
  /** Token used in scrape-stream subjects and the catalog (`varz`, `jsz`, …). */
  readonly name: string;
  readonly subject: string;
  readonly body: object;
  /** First nats-server release that answers this request. */
  readonly since?: string;
  /** Replies are pages: ask each server again with `offset` until its total is reached. */
  readonly paged?: Paging;
  /**
   * Also answered to a connection outside the system account (every account imports it by
   * default), scoped to that account: the one kind of request a server that is no member of
   * the monitored system answers, when the connection is in another account.
   */
  readonly accountScoped?: true;
  /** Each item of the replies' lists is then asked for in detail (ACCOUNTZ per account). */
  readonly details?: Details;
}

/**
 * A list whose items are then asked for one by one, each of one server that lists it,
 * directly (`$SYS.REQ.SERVER.<id>.<directSuffix>`; pages.ts fetchDetails): the replies are
 * that server's pages 2..n of the source, after its list (page 1), and the catalog gathers
 * their `detail` objects.
 */
export interface Details {
  readonly directSuffix: string;
  /** Field of the list reply's data naming the items. */
  readonly list: string;
  readonly body: (item: string) => object;
  /** Items asked for per scrape at most; the rest are reported as not read. */
  readonly max: number;
  /** Requests in flight. */
  readonly concurrency: number;
}

/**
 * How a source pages. The first page is the PING's reply (its body carries `limit`); the
 * following ones are asked of each server directly, `$SYS.REQ.SERVER.<id>.<directSuffix>`,
 * with `offset` and `limit`, until `offset` reaches the reply's total.
 */
export interface Paging {
  readonly directSuffix: string;
  /** Items per page. */
  readonly limit: number;
  /** Field of the reply's data holding the page's items. */
  readonly list: string;
  /** Field of the reply's data counting the items of all pages. */
  readonly total: string;
  /**
   * Before release `before` the offset-0 page is in no particular order while later pages
   * are sorted (JSZ before 2.11.2): the sorted pages are read from offset 1, and an item
   * that neither they nor the first page hold (the first in sort order) is found in an
   * index of keys and asked for by key.
   */
  /**
   * The list is newest first by the RFC 3339 time `field` of its items (CONNZ's closed
   * connections by `stop`): paging ends at the first page whose last item is older than the
   * reply's `now` less `recentMs` of the scrape interval, or after `maxPages` pages (reported
   * as an error: the older items were not read), rather than at the list's total.
   */
  readonly newestFirst?: {
    readonly field: string;
    readonly recentMs: (intervalMs: number) => number;
    readonly maxPages: number;
  };
  readonly unorderedFirstPage?: {
    readonly before: string;
    /** Field of an item naming it. */
    readonly key: string;
    /** Request body listing every item's key, small (replaces the source's body). */
    readonly indexBody: object;
    /** Added to the source's body to ask for one item by key, and nothing when it is gone. */
    readonly itemBody: (key: string) => object;
  };
}

/** Closed connections per page of the connz_closed source. */
export const CLOSED_PAGE = 256;
/** Pages of closed connections read per server and scrape at most: 4,096 closes. */
export const CLOSED_MAX_PAGES = 16;
/** How far back closed connections are read at least, before the server's `now`. */
export const CLOSES_RECENT_MS = 10 * 60_000;

/** Accounts asked for in detail per scrape at most. */
export const ACCOUNT_DETAILS_MAX = 10_000;

/** JetStream accounts per JSZ page (see the jsz source). */
export const JSZ_PAGE_ACCOUNTS = 64;
/** An offset past any account list: with `account` set, JSZ then returns that account or nothing. */
const PAST_THE_END = 1 << 30;

const ping = (kind: string) => `$SYS.REQ.SERVER.PING.${kind}`;

export const SOURCES: readonly Source[] = [
  { name: "varz", subject: ping("VARZ"), body: {} },
  { name: "statsz", subject: ping("STATSZ"), body: {} },
  {
    name: "jsz",
    subject: ping("JSZ"),
    // `consumer` is singular in JSzOptions. `raft` (2.9.15+, ignored before) names the raft
    // groups of streams and consumers.
    body: {
      accounts: true,
      streams: true,
      consumer: true,
      config: true,
      raft: true,
      limit: JSZ_PAGE_ACCOUNTS,
    },
    // JSZ pages accounts, not streams (nats-monitoring.md §0.11); `accounts` counts the
    // server's JetStream accounts (2.11.2 adds `total`, the same number). The reply carries
    // no offset. Before 2.11.2 only offset > 0 sorts the accounts by name.
    paged: {
      directSuffix: "JSZ",
      limit: JSZ_PAGE_ACCOUNTS,
      list: "account_details",
      total: "accounts",
      unorderedFirstPage: {
        before: "2.11.2",
        key: "id",
        indexBody: { accounts: true, limit: PAST_THE_END },
        itemBody: (id: string) => ({ account: id, offset: PAST_THE_END }),
      },
    },
  },
  // Option keys are hyphenated: underscore forms are ignored (nats-monitoring §3.4).
  // `details` (2.10+) lists every problem instead of the first; older servers ignore it.
  { name: "healthz", subject: ping("HEALTHZ"), body: { details: true } },
  { name: "healthz_server", subject: ping("HEALTHZ"), body: { "js-server-only": true } },
  {
    name: "connz",
    subject: ping("CONNZ"),
    body: { subscriptions: true, auth: true, limit: 1024 },
    paged: { directSuffix: "CONNZ", limit: 1024, list: "connections", total: "total" },
    accountScoped: true,
  },
  // Each server's ring of closed connections (up to 10,000), newest first (`sort: "stop"` is
  // descending), for conn-003: paged back to two scrape intervals (at least ten minutes)
  // before the server's own clock, so a busy server's older closes are read too, and never
  // the whole ring. The fold records each close once.
  {
    name: "connz_closed",
    subject: ping("CONNZ"),
    body: { state: 1, sort: "stop", auth: true, limit: CLOSED_PAGE },
    paged: {
      directSuffix: "CONNZ",
      limit: CLOSED_PAGE,
      list: "connections",
      total: "total",
      newestFirst: {
        field: "stop",
        recentMs: (intervalMs) => Math.max(2 * intervalMs, CLOSES_RECENT_MS),
        maxPages: CLOSED_MAX_PAGES,
      },
    },
    accountScoped: true,
  },
  { name: "routez", subject: ping("ROUTEZ"), body: {} },
  { name: "gatewayz", subject: ping("GATEWAYZ"), body: { accounts: true } },
  { name: "leafz", subject: ping("LEAFZ"), body: {} },
  { name: "subsz", subject: ping("SUBSZ"), body: {} },
  // Then each account in detail, asked of one server that lists it: imports, exports, its
  // JWT's claims (limits, activation tokens, signing keys) and its subscriptions on that
  // server. A server in operator mode lists the accounts it has loaded.
  {
    name: "accountz",
    subject: ping("ACCOUNTZ"),
    body: {},
    details: {
      directSuffix: "ACCOUNTZ",
      list: "accounts",
      body: (account: string) => ({ account }),
      max: ACCOUNT_DETAILS_MAX,
      concurrency: 16,
    },
  },
  {
    name: "accstatz",
    subject: "$SYS.REQ.ACCOUNT.PING.STATZ",
    body: { include_unused: true },
    accountScoped: true,
  },
  { name: "idz", subject: ping("IDZ"), body: {}, since: "2.10.0" },
  { name: "raftz", subject: ping("RAFTZ"), body: {}, since: "2.10.26" },
  { name: "ipqueuesz", subject: ping("IPQUEUESZ"), body: { all: true }, since: "2.10.26" },
];

export { versionAtLeast } from "../domain/index.ts";
