/**
 * `db.backup.stream` (spec: db.backup.stream): one table of the backup set, streamed with
 * the chunk protocol of db.query.stream. The request names a table, not SQL: the catalog
 * builds the statement, which runs on the backup connection with no row cap.
 */
import { BadRequestError } from "../domain/index.ts";
import type { BackupStreamRequest } from "../protocol/index.ts";
import type { ArrowBatchSource } from "./stream-sender.ts";
import { streamEndpoint, type StreamHandler, type StreamLimits } from "./stream-handlers.ts";

/** The table and window of a backup request, as the catalog needs them. */
export interface BackupTableRequest {
  readonly schema: string;
  readonly table: string;
  readonly startEpoch?: string;
  readonly endEpoch?: string;
}

/** The catalog as db.backup.stream needs it (node/ adapts catalog/ to this). */
export interface BackupStreamPort {
  readonly limits: StreamLimits;
  /**
   * Starts streaming one table; throws BadRequestError (400) for a table outside the
   * backup set or a bad timestamp, CatalogUnavailableError (503) when the catalog is not open.
   */
  open(request: BackupTableRequest, signal: AbortSignal): Promise<ArrowBatchSource>;
}

export function dbBackupStreamHandler(port: BackupStreamPort): StreamHandler {
  // Spec (Limits): db.query-stream.max-rows does not apply to a backup.
  return streamEndpoint(port.limits, backupRequest, (table, signal) => port.open(table, signal), {
    maxRows: 0,
  });
}

function backupRequest(body: Record<string, unknown>): BackupTableRequest {
  const { schema, table, start_epoch, end_epoch } = body as Partial<
    Record<keyof BackupStreamRequest, unknown>
  >;
  if (typeof schema !== "string" || schema === "" || typeof table !== "string" || table === "") {
    throw new BadRequestError(
      'send {"schema": "hx", "table": "server_stats", "start_epoch"?: RFC 3339, "end_epoch"?: RFC 3339}: schema and table are required',
    );
  }
  for (const [name, value] of [
    ["start_epoch", start_epoch],
    ["end_epoch", end_epoch],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new BadRequestError(`${name} must be an RFC 3339 timestamp string`);
    }
  }
  return {
    schema,
    table,
    ...(typeof start_epoch === "string" ? { startEpoch: start_epoch } : {}),
    ...(typeof end_epoch === "string" ? { endEpoch: end_epoch } : {}),
  };
}
