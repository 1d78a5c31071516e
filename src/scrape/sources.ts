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
  /** Replies are pages: ask each server again with `offset` until `total` is reached. */
  readonly paged?: { readonly directSuffix: string; readonly limit: number };
}

const ping = (kind: string) => `$SYS.REQ.SERVER.PING.${kind}`;

export const SOURCES: readonly Source[] = [
  { name: "varz", subject: ping("VARZ"), body: {} },
  { name: "statsz", subject: ping("STATSZ"), body: {} },
  {
    name: "jsz",
    subject: ping("JSZ"),
    // `consumer` is singular in JSzOptions. `raft` (2.9.15+, ignored before) names the raft
    // groups of streams and consumers.
    body: { accounts: true, streams: true, consumer: true, config: true, raft: true },
  },
  { name: "healthz", subject: ping("HEALTHZ"), body: {} },
  {
    name: "connz",
    subject: ping("CONNZ"),
    body: { subscriptions: true, auth: true, limit: 1024 },
    paged: { directSuffix: "CONNZ", limit: 1024 },
  },
  { name: "routez", subject: ping("ROUTEZ"), body: {} },
  { name: "gatewayz", subject: ping("GATEWAYZ"), body: { accounts: true } },
  { name: "leafz", subject: ping("LEAFZ"), body: {} },
  { name: "subsz", subject: ping("SUBSZ"), body: {} },
  { name: "accountz", subject: ping("ACCOUNTZ"), body: {} },
  { name: "accstatz", subject: "$SYS.REQ.ACCOUNT.PING.STATZ", body: { include_unused: true } },
  { name: "idz", subject: ping("IDZ"), body: {}, since: "2.10.0" },
  { name: "raftz", subject: ping("RAFTZ"), body: {}, since: "2.10.26" },
  { name: "ipqueuesz", subject: ping("IPQUEUESZ"), body: { all: true }, since: "2.10.26" },
];

/** Compares dotted release numbers ("2.9.10" < "2.10.0"); a suffix such as "-RC.1" is ignored. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parse = (v: string) =>
    v
      .split("-")[0]!
      .split(".")
      .map((n) => Number(n) || 0);
  const a = parse(version);
  const b = parse(minimum);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}
