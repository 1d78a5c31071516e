/** The scrape family of checks, in code order. */
import type { Check } from "../check.ts";

export const SCRAPE_CHECKS: readonly Check[] = [];
