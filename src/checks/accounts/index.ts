/** The accounts family of checks, in code order. */
import type { Check } from "../check.ts";
import { accounts002 } from "./accounts-002.ts";

export const ACCOUNTS_CHECKS: readonly Check[] = [accounts002];
