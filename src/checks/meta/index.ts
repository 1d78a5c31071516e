/** The meta family of checks, in code order. */
import type { Check } from "../check.ts";

export const META_CHECKS: readonly Check[] = [];
