/** Headers on scrape-stream messages. */
export const ScrapeHeader = {
  Epoch: "Natsmon-Epoch",
  Source: "Natsmon-Source",
  Server: "Natsmon-Server",
  /** `<index>/<count>`, 1-based, when a reply is split over several messages. */
  Chunk: "Natsmon-Chunk",
} as const;

/** Content negotiation on db.query (spec: Content negotiation). */
export const ACCEPT = "Accept";
export const CSV_MEDIA_TYPE = "text/csv";
export const JSON_MEDIA_TYPE = "application/json";

/** Clients send it when they rely on a breaking API revision (spec: Versioning 3). */
export const API_VERSION_HEADER = "Monitor-Api-Version";
