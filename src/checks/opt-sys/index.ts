/** The opt-sys family of optimization checks, in code order. */
import type { Check } from "../check.ts";

export const OPT_SYS_CHECKS: readonly Check[] = [];
