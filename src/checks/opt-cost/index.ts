/**
 * The opt-cost family of optimization checks, in code order. opt-cost-004 (uncompressed
 * large stream) is not built: it needs the stream configuration's `compression` (2.10+),
 * which the catalog does not fold.
 */
import type { Check } from "../check.ts";
import { optCost001 } from "./opt-cost-001.ts";
import { optCost002 } from "./opt-cost-002.ts";
import { optCost003 } from "./opt-cost-003.ts";
import { optCost005 } from "./opt-cost-005.ts";

export const OPT_COST_CHECKS: readonly Check[] = [optCost001, optCost002, optCost003, optCost005];
