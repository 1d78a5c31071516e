import { BadRequestError } from "../domain/index.ts";
import type { DisconnectHistoryReply, ScraperStatusReply, SinkInfoReply } from "../protocol/index.ts";
import { parseJsonRequest, type ApiHandler } from "./adapter.ts";

/** The scrape side as its ops endpoints need it (node/ adapts scrape/ to this). */
export interface ScraperPort {
  status(): ScraperStatusReply;
  setPaused(paused: boolean): void;
  /** Scrapes now and resolves once the epoch is committed to the stream. */
  trigger(): Promise<ScraperStatusReply>;
}

const json = (value: unknown) => ({ body: JSON.stringify(value) });

/** `ops.scraper.status`: state, interval, the last epoch with per-source timings and bytes. */
export function scraperStatusHandler(port: ScraperPort): ApiHandler {
  return () => Promise.resolve(json(port.status()));
}

/** `ops.scraper.toggle`: `{paused: bool}` sets the state, `{}` flips it; replies with the status. */
export function scraperToggleHandler(port: ScraperPort): ApiHandler {
  return (request) => {
    const body = parseJsonRequest(request.data);
    if (body.paused !== undefined && typeof body.paused !== "boolean") {
      throw new BadRequestError("paused must be true or false (or left out to flip the state)");
    }
    const paused = body.paused ?? port.status().state === "running";
    port.setPaused(paused);
    return Promise.resolve(json(port.status()));
  };
}

/** `ops.scraper.trigger`: one scrape now (also while paused); replies once it is committed. */
export function scraperTriggerHandler(port: ScraperPort): ApiHandler {
  return async () => json(await port.trigger());
}

/** `ops.sink.info`: the scrape stream's layout and state. */
export function sinkInfoHandler(info: () => Promise<SinkInfoReply>): ApiHandler {
  return async () => json(await info());
}

/**
 * `ops.disconnect.history`: `{since?: RFC 3339, limit?: n}` → the closed disconnect buckets
 * ending after `since`, oldest first, at most the newest `limit`, and the bucket still open.
 */
export function disconnectHistoryHandler(
  history: (since?: number, limit?: number) => DisconnectHistoryReply,
): ApiHandler {
  return (request) => {
    const body = parseJsonRequest(request.data);
    let since: number | undefined;
    if (body.since !== undefined) {
      since = typeof body.since === "string" ? Date.parse(body.since) : NaN;
      if (Number.isNaN(since)) throw new BadRequestError("since must be an RFC 3339 time");
    }
    const limit = body.limit;
    if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1)) {
      throw new BadRequestError("limit must be a positive integer");
    }
    return Promise.resolve(json(history(since, limit)));
  };
}
