/** The opt-idle family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optIdle001 } from "./opt-idle-001.ts";
import { optIdle002 } from "./opt-idle-002.ts";
import { optIdle003 } from "./opt-idle-003.ts";
import { optIdle004 } from "./opt-idle-004.ts";
import { optIdle005 } from "./opt-idle-005.ts";
import { optIdle006 } from "./opt-idle-006.ts";
import { optIdle007 } from "./opt-idle-007.ts";

export const OPT_IDLE_CHECKS: readonly Check[] = [
  optIdle001,
  optIdle002,
  optIdle003,
  optIdle004,
  optIdle005,
  optIdle006,
  optIdle007,
];
