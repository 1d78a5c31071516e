/** An epoch is one complete scrape of one system, named by its start time. */
export type Epoch = Date;

/** RFC 3339 with millisecond precision, the wire form of an epoch. */
export function formatEpoch(epoch: Epoch): string {
  return epoch.toISOString();
}

export function parseEpoch(text: string): Epoch {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new TypeError(`not an RFC 3339 timestamp: ${text}`);
  return date;
}
