/** The accounts family of checks, in code order. */
import type { Check } from "../check.ts";
import { accounts001 } from "./accounts-001.ts";
import { accounts002 } from "./accounts-002.ts";
import { accounts003 } from "./accounts-003.ts";
import { accounts004 } from "./accounts-004.ts";
import { accounts005 } from "./accounts-005.ts";
import { accounts006 } from "./accounts-006.ts";
import { accounts007 } from "./accounts-007.ts";
import { accounts008 } from "./accounts-008.ts";

export const ACCOUNTS_CHECKS: readonly Check[] = [
  accounts001,
  accounts002,
  accounts003,
  accounts004,
  accounts005,
  accounts006,
  accounts007,
  accounts008,
];
