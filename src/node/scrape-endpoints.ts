import {
  scraperStatusHandler,
  scraperToggleHandler,
  scraperTriggerHandler,
  sinkInfoHandler,
  profilezHandler,
  expvarzHandler,
  disconnectHistoryHandler,
  type ApiHandler,
} from "../api/index.ts";
import type { SystemConfig } from "../config/index.ts";
import type { ScrapeSide } from "./scrape-side.ts";

/**
 * ⑦ The API endpoints of a system's scrape side: the scraper, sink, diagnostics and
 * disconnect-history ops. Each answers 503 while the side is still starting.
 */
export function scrapeEndpoints(system: SystemConfig, scrape: ScrapeSide): Record<string, ApiHandler> {
  return {
    "ops.scraper.status": scraperStatusHandler(scrape.port),
    "ops.scraper.toggle": scraperToggleHandler(scrape.port),
    "ops.scraper.trigger": scraperTriggerHandler(scrape.port),
    "ops.sink.info": sinkInfoHandler(scrape.sinkInfo),
    "ops.diagnostics.profilez": profilezHandler(scrape.askDiagnostic, system.id),
    "ops.diagnostics.expvarz": expvarzHandler(scrape.askDiagnostic, system.id),
    "ops.disconnect.history": disconnectHistoryHandler(scrape.disconnectHistory),
  };
}
