/** The meta family of checks, in code order. */
import type { Check } from "../check.ts";
import { meta001 } from "./meta-001.ts";
import { meta002 } from "./meta-002.ts";
import { meta003 } from "./meta-003.ts";
import { meta004 } from "./meta-004.ts";
import { meta005 } from "./meta-005.ts";
import { meta006 } from "./meta-006.ts";
import { meta007 } from "./meta-007.ts";
import { meta008 } from "./meta-008.ts";
import { meta009 } from "./meta-009.ts";

export const META_CHECKS: readonly Check[] = [
  meta001,
  meta002,
  meta003,
  meta004,
  meta005,
  meta006,
  meta007,
  meta008,
  meta009,
];
