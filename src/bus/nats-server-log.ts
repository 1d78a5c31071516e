/** natsmon's log levels a nats-server log line maps to. */
export type NatsServerLogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

export interface NatsServerLogLine {
  readonly level: NatsServerLogLevel;
  /** The line without nats-server's pid, time and level tag. */
  readonly text: string;
}

const TAGS: Readonly<Record<string, NatsServerLogLevel>> = {
  TRC: "trace",
  DBG: "debug",
  INF: "info",
  SYS: "info",
  WRN: "warn",
  ERR: "error",
  FTL: "fatal",
};

/** `[pid] 2026/11/27 00:33:50.533812 [INF] text`, nats-server's log line on stderr. */
const LINE = /^\[\d+\] \S+ \S+ \[([A-Z]{3})\] ?(.*)$/;

/**
 * The level and text of one nats-server log line. A line without a tag (a Go panic or a
 * goroutine dump, which nats-server writes on stderr without its logger) is a warning: it is
 * rare and says the server is in trouble.
 */
export function parseNatsServerLogLine(line: string): NatsServerLogLine {
  const match = LINE.exec(line);
  const level = match ? TAGS[match[1]!] : undefined;
  if (!match || !level) return { level: "warn", text: line };
  return { level, text: match[2]! };
}

/**
 * What nats-server says when its JetStream storage fails it: a disk full (2.9.11 and newer
 * disable JetStream on "no space left on device"), or JetStream's own storage limits
 * (max_file_store, by default 75% of the disk's free space when the server started).
 */
const STORAGE_FAULT =
  /no space left on device|JetStream out of .*resources|resource limits exceeded|JetStream.* (?:will be )?DISABLED|disabling JetStream/i;

export function isStorageFault(text: string): boolean {
  return STORAGE_FAULT.test(text);
}

/**
 * Splits a byte stream into lines, each handed to `onLine` without its newline; a line
 * longer than `maxLineChars` is handed on cut, so memory stays bounded whatever the stream.
 */
export function lineSplitter(onLine: (line: string) => void, maxLineChars = 8192): (chunk: Buffer) => void {
  let partial = "";
  return (chunk) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    if (partial.length > maxLineChars) {
      onLine(partial.slice(0, maxLineChars));
      partial = "";
    }
    for (const line of parts) if (line.trim() !== "") onLine(line.slice(0, maxLineChars));
  };
}
