/** The opt-acct family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_ACCT_CHECKS: readonly Check[] = [];
