/**
 * ⑥ Broadcasts: announcements of what the catalog side just committed. In: epochs (later,
 * finding transitions, disconnect buckets, memory samples); out: fire-and-forget feed
 * messages. No state.
 */
export { publishEpoch } from "./epoch-feed.ts";
export { publishDisconnectBucket } from "./disconnect-feed.ts";
