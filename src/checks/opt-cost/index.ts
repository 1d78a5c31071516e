/** The opt-cost family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_COST_CHECKS: readonly Check[] = [];
