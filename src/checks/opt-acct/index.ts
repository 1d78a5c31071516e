/** The opt-acct family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optAcct001 } from "./opt-acct-001.ts";
import { optAcct002 } from "./opt-acct-002.ts";

export const OPT_ACCT_CHECKS: readonly Check[] = [optAcct001, optAcct002];
