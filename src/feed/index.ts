/**
 * ⑥ Broadcasts: announcements of what the catalog side just committed. In: epochs, finding
 * transitions, disconnect buckets (later memory samples); out: fire-and-forget feed
 * messages. No state.
 */
export { publishEpoch } from "./epoch-feed.ts";
export { publishDisconnectBucket } from "./disconnect-feed.ts";
export { publishTransitions } from "./finding-feed.ts";
