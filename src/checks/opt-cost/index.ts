/** The opt-cost family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optCost001 } from "./opt-cost-001.ts";
import { optCost002 } from "./opt-cost-002.ts";
import { optCost003 } from "./opt-cost-003.ts";
import { optCost004 } from "./opt-cost-004.ts";
import { optCost005 } from "./opt-cost-005.ts";

export const OPT_COST_CHECKS: readonly Check[] = [optCost001, optCost002, optCost003, optCost004, optCost005];
