import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import type { EmbeddedSink } from "../bus/index.ts";
import type { Logger } from "../lib/index.ts";
import { describeDiskSpace, DiskLevel, type DiskReading } from "./data-dir-space.ts";

/** How long JetStream has to answer natsmon's probe before it counts as stuck. */
const PROBE_TIMEOUT_MS = 3_000;
/** The least time between two restarts of the embedded server. */
const RESTART_EVERY_MS = 60_000;

export interface EmbeddedSinkRecovery {
  /** Handles one reading of the data dir's disk. */
  readonly onReading: (reading: DiskReading) => Promise<void>;
  /**
   * When the data dir's disk was found full, with JetStream not seen answering since: from
   * then until a probe finds it answering, space back or not, and across natsmon's restart
   * of the server. Undefined otherwise.
   */
  readonly diskFullSince: () => Date | undefined;
}

/**
 * Brings the embedded sink's JetStream back once its disk has space again. What nats-server
 * does on a write error it cannot make (a disk full) depends on its version: 2.9.10 deadlocks
 * the stream (its filestore takes a lock it holds: publishes, stream info and account info
 * hang for ever, it logs nothing, and only SIGKILL stops it); 2.9.11 and newer log "JetStream
 * out of file resources, will be DISABLED" and keep it disabled. Either way only a restart
 * brings it back, and natsmon owns this server, so it restarts it, saying why. While the disk
 * is still full nothing is done (the server would fail again). An external sink is not
 * natsmon's to restart: the scrape side's log says what fails there.
 *
 * Returns the handler of each data-dir reading, and since when the full disk has kept the sink stuck.
 */
export function embeddedSinkRecovery(options: {
  embedded: EmbeddedSink;
  nc: NatsConnection;
  log: Logger;
}): EmbeddedSinkRecovery {
  const { embedded, nc, log } = options;
  /** The disk filled up, or nats-server reported a storage fault, since JetStream last answered. */
  let troubled = false;
  /** When the disk was found full, since JetStream last answered. */
  let diskFullSince: Date | undefined;
  let lastRestart = 0;
  const onReading = async (reading: DiskReading) => {
    if (reading.level === DiskLevel.Full) diskFullSince ??= new Date();
    if (reading.level === DiskLevel.Full || embedded.storageFault()) troubled = true;
    if (!troubled || reading.level === DiskLevel.Full) return;
    const stuck = await probe(nc);
    if (!stuck) {
      troubled = false;
      diskFullSince = undefined;
      return;
    }
    if (Date.now() - lastRestart < RESTART_EVERY_MS) return;
    lastRestart = Date.now();
    log.error(
      { dir: reading.dir, free_bytes: reading.freeBytes, reason: stuck, said: embedded.storageFault() },
      `the embedded nats-server's JetStream does not answer since its disk filled up, though the data dir ` +
        `${reading.dir} has ${describeDiskSpace(reading)} again; natsmon restarts the server (nats-server ` +
        "2.9.10 stays stuck after a failed write, newer versions disable JetStream until restarted)",
    );
    await embedded.restart("its JetStream was stuck after its disk filled up");
    log.info({ pid: embedded.server.pid }, "the embedded nats-server restarted; natsmon reconnects to it");
  };
  return { onReading, diskFullSince: () => diskFullSince };
}

/** Why JetStream does not answer natsmon's account info request, or undefined when it does. */
async function probe(nc: NatsConnection): Promise<string | undefined> {
  try {
    const jsm = await jetstreamManager(nc, { timeout: PROBE_TIMEOUT_MS, checkAPI: false });
    await jsm.getAccountInfo();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
