/** The opt-balance family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optBalance001 } from "./opt-balance-001.ts";
import { optBalance002 } from "./opt-balance-002.ts";
import { optBalance003 } from "./opt-balance-003.ts";
import { optBalance004 } from "./opt-balance-004.ts";
import { optBalance005 } from "./opt-balance-005.ts";
import { optBalance006 } from "./opt-balance-006.ts";
import { optBalance007 } from "./opt-balance-007.ts";
import { optBalance008 } from "./opt-balance-008.ts";

export const OPT_BALANCE_CHECKS: readonly Check[] = [
  optBalance001,
  optBalance002,
  optBalance003,
  optBalance004,
  optBalance005,
  optBalance006,
  optBalance007,
  optBalance008,
];
