/** The opt-place family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optPlace001 } from "./opt-place-001.ts";
import { optPlace002 } from "./opt-place-002.ts";
import { optPlace003 } from "./opt-place-003.ts";
import { optPlace004 } from "./opt-place-004.ts";

export const OPT_PLACE_CHECKS: readonly Check[] = [optPlace001, optPlace002, optPlace003, optPlace004];
