/** The opt-idle family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_IDLE_CHECKS: readonly Check[] = [];
