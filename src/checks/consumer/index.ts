/** The consumer family of checks, in code order. */
import type { Check } from "../check.ts";

export const CONSUMER_CHECKS: readonly Check[] = [];
