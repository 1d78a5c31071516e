/**
 * What the scraper asks every monitored server, once per epoch. The PING form is answered
 * by every server sharing the system account.
 */
export interface Source {
  /** Token used in scrape-stream subjects and the catalog (`varz`, `jsz`, …). */
  readonly name: string;
  readonly subject: string;
  readonly body: object;
}

export const SOURCES: readonly Source[] = [
  { name: "varz", subject: "$SYS.REQ.SERVER.PING.VARZ", body: {} },
  {
    name: "jsz",
    subject: "$SYS.REQ.SERVER.PING.JSZ",
    // `consumer` is singular in JSzOptions.
    body: { accounts: true, streams: true, consumer: true, config: true },
  },
  { name: "healthz", subject: "$SYS.REQ.SERVER.PING.HEALTHZ", body: {} },
];
