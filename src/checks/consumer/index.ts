/** The consumer family of checks, in code order. */
import type { Check } from "../check.ts";
import { consumer001 } from "./consumer-001.ts";
import { consumer002 } from "./consumer-002.ts";
import { consumer003 } from "./consumer-003.ts";
import { consumer004 } from "./consumer-004.ts";
import { consumer005 } from "./consumer-005.ts";
import { consumer006 } from "./consumer-006.ts";
import { consumer007 } from "./consumer-007.ts";
import { consumer008 } from "./consumer-008.ts";
import { consumer009 } from "./consumer-009.ts";
import { consumer010 } from "./consumer-010.ts";
import { consumer011 } from "./consumer-011.ts";
import { consumer012 } from "./consumer-012.ts";

export const CONSUMER_CHECKS: readonly Check[] = [
  consumer001,
  consumer002,
  consumer003,
  consumer004,
  consumer005,
  consumer006,
  consumer007,
  consumer008,
  consumer009,
  consumer010,
  consumer011,
  consumer012,
];
