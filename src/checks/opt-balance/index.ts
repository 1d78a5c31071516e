/** The opt-balance family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_BALANCE_CHECKS: readonly Check[] = [];
