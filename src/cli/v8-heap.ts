/**
 * For the commands that read db.query.stream and db.backup.stream (`natsmon query`,
 * `natsmon backup`): they receive Arrow IPC chunks of up to 1 MiB through nats.js, which
 * grows each incoming message's buffer by doubling, several short-lived megabytes per
 * chunk. Such arrays live outside V8's heap, and by default V8 starts a full mark-compact
 * whenever that memory has grown by 64 MB since the last one: about ten per 1M-row stream,
 * most of the client's GC time, though a scavenge would free them with their owners.
 * Counted in the global heap limit instead, they are. Measured on Node 24:
 * the stream client's CPU per 1M-row result 232 → 140 ms; a loop allocating 2 GB in 1 MiB
 * arrays 19 mark-compacts → none, 366 → 165 ms of CPU, peak RSS 195 → 174 MB. The node
 * keeps V8's default: there it saved no CPU and raised peak RSS by 50 MB.
 */
import { setFlagsFromString } from "node:v8";

/** Process-wide; call first thing in a command that reads streams. */
export function tuneHeapForStreamReading(): void {
  setFlagsFromString("--external-memory-accounted-in-global-limit");
}
