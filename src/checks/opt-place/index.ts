/** The opt-place family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_PLACE_CHECKS: readonly Check[] = [];
