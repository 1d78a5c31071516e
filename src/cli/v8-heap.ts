/**
 * Imported by main.ts before anything allocates, so every natsmon process runs with it,
 * and by the query bench's processes, so they run as natsmon does.
 *
 * natsmon moves large, short-lived byte arrays: the node builds and sends Arrow IPC
 * chunks of up to 1 MiB (and reads DuckDB's vectors and strings into more), and `natsmon
 * query` and `natsmon backup` receive them through nats.js, which grows each incoming
 * message's buffer by doubling. They live outside V8's heap, and by default V8 starts a
 * full mark-compact whenever that memory has grown by 64 MB since the last one, though
 * the scavenges that collect their owners would free them: about ten per 1M-row stream in
 * the client, and five per stream in a node whose young generation had grown. Counted in
 * the global heap limit instead, they are left to the scavenges. Measured on Node 24: a
 * loop allocating 2 GB in 1 MiB arrays, 19 mark-compacts → none, 366 → 165 ms of CPU,
 * peak RSS 195 → 174 MB; the stream client's CPU per 1M-row result, 232 → 140 ms; the
 * node's CPU per uncompressed stream after zstd streams, five mark-compacts a stream →
 * none after the first, and about 50 ms less CPU; the node's peak RSS within its
 * run-to-run spread (368–424 MB with or without).
 *
 * One more setting only works from the command line, so the entry's shebang, `npm run
 * natsmon` and `npm start` pass it to node: `--initial-heap-size=128`. A client's JS heap is small (about
 * 12 MB), and the global limit grows with it, so the chunks' arrays still reached the
 * limit about four times per 1M-row stream, each time a mark-compact; starting the heap's
 * limits at 128 MB leaves them to the scavenges. Measured in `bench:query`'s client: 33 →
 * 5 mark-compacts over seven streams, CPU per stream 190–220 → 120–145 ms. `npm start`
 * gives it to the node as well, as the installed binary's shebang does: over `bench:query`'s
 * 21 streams of mixed compression, V8's background GC threads in the node used 0.7–0.8 s
 * of CPU with it against 1.9–2.9 s without, and the node's CPU fell by 10–18%, for a peak
 * RSS of about 480 MB against 390 (streams of one compression alone showed no gain).
 * `npm run bench:query` runs with it too, so that its in-process side is not slowed by full
 * collections the node does not have.
 */
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--external-memory-accounted-in-global-limit");
