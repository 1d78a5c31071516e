import type { DeliveryLogEntry } from "../protocol/index.ts";

/** The width of `deliveries log`'s answer column: the status and the start of the error. */
export const ANSWER_WIDTH = 60;

/**
 * The last attempt's status and the start of its error on one line (`400 at least one label
 * pair required`, `302 redirects to https://…`), cut to {@link ANSWER_WIDTH}; `--json` has
 * all of it.
 */
export function answerCell(e: Pick<DeliveryLogEntry, "status_code" | "error">): string {
  let error = e.error ?? "";
  // An answered attempt's error starts with "HTTP <status>": the status is shown once.
  if (e.status_code !== undefined) error = error.replace(/^HTTP \d+:?\s*/, "");
  const text = [e.status_code, readableAnswer(error)].filter((p) => p !== undefined && p !== "").join(" ");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > ANSWER_WIDTH ? `${line.slice(0, ANSWER_WIDTH - 1)}…` : line;
}

/**
 * An answer body as a person reads it: Alertmanager answers a JSON string
 * (`"at least one label pair required"`) or `{"code":…,"message":…}`; anything else as is.
 */
function readableAnswer(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "string") return value;
    const message = (value as { message?: unknown } | null)?.message;
    if (typeof message === "string") return message;
  } catch {
    // Not JSON: shown as the receiver wrote it.
  }
  return text;
}
