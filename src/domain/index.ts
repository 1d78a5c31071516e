/**
 * The shared vocabulary of natsmon: ids, epochs, roles and the error family.
 * Pure values and functions, no I/O; every other folder may import it.
 */
export { isToken, assertToken } from "./ids.ts";
export { EPOCH_CLOCK_TOLERANCE_MS, formatEpoch, parseEpoch } from "./epoch.ts";
export type { Epoch } from "./epoch.ts";
export { Role, ROLES } from "./roles.ts";
export {
  ErrorCode,
  MonError,
  BadRequestError,
  NotFoundError,
  QueryTimeoutError,
  TooManyRowsError,
  CatalogUnavailableError,
  ScraperUnavailableError,
} from "./errors.ts";
export {
  Severity,
  SEVERITIES,
  isSeverity,
  FindingStatus,
  findingId,
  findingKeyTokens,
  RETIRED_CHECKS,
  currentCheckCode,
  isOldStyleCode,
} from "./findings.ts";
export type { Finding, FiringFinding, Transition } from "./findings.ts";
export { versionAtLeast } from "./versions.ts";
