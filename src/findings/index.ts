/**
 * ⑤ Findings lifecycle. In: each epoch's findings (with the servers that answered, the
 * checks that failed and the disabled ones); out: the transitions of the spec's status
 * table (firing, resolved, changed). It owns the baseline of firing findings, kept in the
 * system's KV bucket so startsAt and cached names survive restarts.
 */
export { diffFindings, compareFindings } from "./diff-findings.ts";
export type { DiffContext, DiffResult } from "./diff-findings.ts";
export { baselineChanges } from "./baseline-changes.ts";
export type { BaselineChanges } from "./baseline-changes.ts";
export { openFindingsBaseline } from "./baseline-store.ts";
export type { FindingsBaselineStore, StoredBaseline } from "./baseline-store.ts";
export { baselineKey } from "./baseline-key.ts";
export { startFindingsTracker, BaselineStart } from "./findings-tracker.ts";
export type {
  FindingsTracker,
  FindingsTrackerOptions,
  EpochFindings,
  EpochFinding,
} from "./findings-tracker.ts";
