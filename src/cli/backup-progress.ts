/**
 * Progress of `natsmon backup` on stderr: one line per table when it is done (tables
 * done/total, its rows and bytes, the running totals), and on a terminal a line redrawn
 * in place while a table streams. stdout stays free for the final summary.
 */

/** Least time between two redraws of the live line. */
const REDRAW_MS = 100;

export interface ProgressSink {
  readonly isTTY?: boolean;
  write(text: string): boolean;
}

export class BackupProgress {
  private readonly out: ProgressSink;
  private readonly total: number;
  private done = 0;
  private rows = 0;
  private bytes = 0;
  private current: { name: string; rows: number; bytes: number; started: number } | undefined;
  private lastDraw = 0;
  private readonly started = performance.now();

  constructor(out: ProgressSink, totalTables: number) {
    this.out = out;
    this.total = totalTables;
  }

  get totals(): { tables: number; rows: number; bytes: number; ms: number } {
    return { tables: this.done, rows: this.rows, bytes: this.bytes, ms: performance.now() - this.started };
  }

  startTable(name: string): void {
    this.current = { name, rows: 0, bytes: 0, started: performance.now() };
    this.draw(true);
  }

  /** Rows and bytes received so far for the current table (cumulative). */
  update(rows: number, bytes: number): void {
    if (!this.current) return;
    this.current.rows = rows;
    this.current.bytes = bytes;
    this.draw(false);
  }

  endTable(rows: number, bytes: number): void {
    const table = this.current;
    if (!table) return;
    this.current = undefined;
    this.done++;
    this.rows += rows;
    this.bytes += bytes;
    const seconds = ((performance.now() - table.started) / 1000).toFixed(1);
    this.clearLine();
    this.out.write(
      `${this.counter()} ${table.name}: ${count(rows)} rows, ${size(bytes)} in ${seconds} s` +
        ` (total ${count(this.rows)} rows, ${size(this.bytes)})\n`,
    );
  }

  /** A table backed up without asking the node, with the reason it holds no rows. */
  emptyTable(name: string, reason: string): void {
    this.done++;
    this.clearLine();
    this.out.write(`${this.counter()} ${name}: 0 rows, ${reason}\n`);
  }

  /**
   * The work after the last table (reconciling, views, checkpoint, rename): 0.9–1.3 s on a
   * 3,000-epoch catalog of 333k rows, growing with the file. Said on its own line, so the
   * silence is not taken for a hang.
   */
  finishing(what: string): void {
    this.clearLine();
    this.out.write(`finishing: ${what}\n`);
  }

  /** Ends a live line (before an error message, say). */
  interrupt(): void {
    this.clearLine();
  }

  private counter(): string {
    const width = String(this.total).length;
    return `[${String(this.done).padStart(width)}/${this.total}]`;
  }

  private draw(force: boolean): void {
    if (!this.out.isTTY || !this.current) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    const t = this.current;
    this.out.write(
      `\r\x1b[2K${this.counter()} ${t.name}: ${count(t.rows)} rows, ${size(t.bytes)}` +
        ` (total ${count(this.rows + t.rows)} rows, ${size(this.bytes + t.bytes)})`,
    );
  }

  private clearLine(): void {
    if (this.out.isTTY) this.out.write("\r\x1b[2K");
  }
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** Bytes in B, KB, MB or GB (powers of 1000), one decimal. */
export function size(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
