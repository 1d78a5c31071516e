/**
 * A JetStream leader election (the stream's leader lost, its servers restarting) leaves
 * the stream without a leader for a few seconds: nats.js reports no responders as
 * "jetstream is not enabled", and requests in flight time out. Anything else (a payload
 * too large, a stream deleted or not matching) does not pass by waiting.
 */
export function passesByWaiting(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (["JetStreamNotEnabled", "TimeoutError", "NoRespondersError"].includes(err.name)) return true;
  // 503 statuses: "JetStream system temporarily unavailable" and the like.
  return err.name === "JetStreamApiError" && (err as Error & { status?: number }).status === 503;
}
