import { statfsSync } from "node:fs";
import { mkdir, statfs } from "node:fs/promises";
import type { EmbeddedSink } from "../bus/index.ts";
import type { Logger, NodeMetrics } from "../lib/index.ts";

/** How full the data dir's disk is: `low` below 10% free, `full` below 2% free. */
export const DiskLevel = { Ok: "ok", Low: "low", Full: "full" } as const;
export type DiskLevel = (typeof DiskLevel)[keyof typeof DiskLevel];

const LOW_FREE_FRACTION = 0.1;
const FULL_FREE_FRACTION = 0.02;
/** How often the data dir's free space is read (a statfs call: cheap). */
export const DISK_WATCH_MS = 5_000;

export interface DiskReading {
  readonly dir: string;
  /** Bytes an unprivileged writer may still use (statfs bavail). */
  readonly freeBytes: number;
  readonly totalBytes: number;
  readonly level: DiskLevel;
}

export function diskLevel(freeBytes: number, totalBytes: number): DiskLevel {
  if (totalBytes <= 0) return DiskLevel.Ok;
  const free = freeBytes / totalBytes;
  if (free < FULL_FREE_FRACTION) return DiskLevel.Full;
  return free < LOW_FREE_FRACTION ? DiskLevel.Low : DiskLevel.Ok;
}

export async function readDiskSpace(dir: string): Promise<DiskReading> {
  return reading(dir, await statfs(dir));
}

function reading(dir: string, s: { bavail: number; blocks: number; bsize: number }): DiskReading {
  const freeBytes = s.bavail * s.bsize;
  const totalBytes = s.blocks * s.bsize;
  return { dir, freeBytes, totalBytes, level: diskLevel(freeBytes, totalBytes) };
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** "0.0 MiB free of 20.0 MiB (0%)". */
export function describeDiskSpace(r: DiskReading): string {
  const pct = r.totalBytes > 0 ? Math.floor((100 * r.freeBytes) / r.totalBytes) : 100;
  return `${mb(r.freeBytes)} free of ${mb(r.totalBytes)} (${pct}%)`;
}

const REMEDY =
  "free space on that disk, lower db.retention, or move node.data-dir to a larger disk " +
  "(it holds the DuckDB catalogs and, on the embedded sink, the JetStream store)";

export interface DiskWatch extends AsyncDisposable {
  /** The last reading, once there is one. */
  current(): DiskReading | undefined;
}

/**
 * Makes the data dir if it is missing, then reads its free space every `everyMs`, logs when
 * it becomes low (warn), full (error) or fine again (info), saying which directory, how much
 * is free and what to do, sets the node's data-dir gauges, and hands each reading to `onReading`.
 */
export function startDiskWatch(options: {
  dir: string;
  log: Logger;
  metrics: NodeMetrics;
  everyMs?: number;
  onReading?: (reading: DiskReading) => Promise<void>;
}): DiskWatch {
  const { dir, log } = options;
  let last: DiskReading | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    let reading: DiskReading;
    try {
      reading = await readDiskSpace(dir);
    } catch (err) {
      log.warn({ dir, err }, "cannot read the data dir's free space");
      return;
    }
    options.metrics.dataDirSpace(reading.freeBytes, reading.totalBytes);
    const before = last?.level ?? DiskLevel.Ok;
    last = reading;
    const fields = { dir, free_bytes: reading.freeBytes, total_bytes: reading.totalBytes };
    if (reading.level !== before) {
      const space = `the data dir ${dir} has ${describeDiskSpace(reading)}`;
      if (reading.level === DiskLevel.Full) {
        log.error(fields, `${space}: its disk is full, and writes there fail; ${REMEDY}`);
      } else if (reading.level === DiskLevel.Low) {
        log.warn(fields, `${space}: its disk is running out of space; ${REMEDY}`);
      } else {
        log.info(fields, `${space} again`);
      }
    }
    await options.onReading?.(reading);
  };
  const timer = setInterval(() => {
    // One reading at a time: a slow onReading (a server restart) delays the next one.
    running = running.then(tick).catch((err: unknown) => log.error({ err }, "the data dir watch failed"));
  }, options.everyMs ?? DISK_WATCH_MS);
  // A new data dir may not exist yet (on an external sink, nothing else has made it by now):
  // made first, so the first reading is of it. One that cannot be made is named by that reading.
  running = mkdir(dir, { recursive: true })
    .catch(() => undefined)
    .then(tick)
    .catch((err: unknown) => log.error({ err }, "the data dir watch failed"));
  return {
    current: () => last,
    async [Symbol.asyncDispose]() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Why the embedded sink does not take messages when its storage is the reason: the data
 * dir's disk full (read now: a publish can fail before the watch's next reading), what
 * nats-server said about its JetStream storage, natsmon's restart of the server, or a disk
 * that filled up with JetStream not seen answering since (`diskFullSince`, from
 * embeddedSinkRecovery): space back, the server not yet restarted. Undefined for an external
 * sink (natsmon cannot see its disks) and when storage is not the reason.
 */
export function sinkStorageCause(
  embedded: EmbeddedSink | undefined,
  dir: string,
  diskFullSince?: Date,
): string | undefined {
  if (!embedded) return undefined;
  const said = embedded.storageFault();
  const saying = said ? `; nats-server said: ${said}` : "";
  let now: DiskReading | undefined;
  try {
    now = reading(dir, statfsSync(dir));
  } catch {
    now = undefined;
  }
  if (now?.level === DiskLevel.Full) {
    return (
      `the disk of the data dir ${dir} is full (${describeDiskSpace(now)}), so the embedded ` +
      `nats-server cannot write its JetStream store${saying}. To fix it: ${REMEDY}; ` +
      "natsmon restarts the embedded server once space is back if its JetStream stays stuck"
    );
  }
  if (said) return `the embedded nats-server reported a JetStream storage fault: ${said}`;
  const restarted = embedded.restartedAt();
  const recent = restarted !== undefined && Date.now() - restarted.getTime() < RECENT_RESTART_MS;
  if (recent && (diskFullSince === undefined || restarted.getTime() >= diskFullSince.getTime())) {
    return (
      `natsmon restarted the embedded nats-server at ${restarted.toISOString()}: ` +
      `${embedded.restartCause() ?? "unknown why"}; it reconnects to it`
    );
  }
  if (diskFullSince) {
    const space = now ? `, and has ${describeDiskSpace(now)} now` : "";
    return (
      `the disk of the data dir ${dir} was full at ${diskFullSince.toISOString()}${space}; the embedded ` +
      "nats-server's JetStream has not been seen answering since (nats-server 2.9.10 stays stuck after a " +
      "failed write, newer versions disable JetStream): natsmon restarts the server once space is back " +
      "and it finds JetStream stuck"
    );
  }
  return undefined;
}

/** How long after natsmon restarted the embedded server a publish failing is put down to it. */
const RECENT_RESTART_MS = 60_000;
