/**
 * Keeps a client command going when what it writes to has gone away: a reader that stopped
 * reading (`natsmon backup … 2>&1 | head -1`: EPIPE) or a terminal that closed (EIO). Node
 * reports a failed write to stdout or stderr as an `error` event, and with no listener that
 * is an uncaught exception, which ends the process wherever it is: for a backup, midway,
 * before it has removed its temporary file, though the user asked for a backup and only
 * stopped reading about it.
 */

/** Drops the error: the output is lost, the work is not. */
const dropOutputError = (): void => undefined;

/**
 * From now on, for the rest of the process, output to stdout or stderr that cannot be
 * written is dropped. For a command whose output only reports on work that is its real
 * result (progress lines, a summary): the exit code still tells how the work ended. Never
 * removed: a write's error is emitted after the write returns, as late as the last line.
 */
export function outliveClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners("error").includes(dropOutputError)) stream.on("error", dropOutputError);
  }
}
