/** The scrape family of checks, in code order. */
import type { Check } from "../check.ts";
import { scrape001 } from "./scrape-001.ts";

export const SCRAPE_CHECKS: readonly Check[] = [scrape001];
