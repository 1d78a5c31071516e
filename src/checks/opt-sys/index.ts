/** The opt-sys family of optimization checks, in code order. */
import type { Check } from "../check.ts";
import { optSys001 } from "./opt-sys-001.ts";
import { optSys002 } from "./opt-sys-002.ts";
import { optSys003 } from "./opt-sys-003.ts";
import { optSys004 } from "./opt-sys-004.ts";
import { optSys005 } from "./opt-sys-005.ts";
import { optSys006 } from "./opt-sys-006.ts";
import { optSys007 } from "./opt-sys-007.ts";
import { optSys008 } from "./opt-sys-008.ts";
import { optSys009 } from "./opt-sys-009.ts";
import { optSys010 } from "./opt-sys-010.ts";
import { optSys011 } from "./opt-sys-011.ts";
import { optSys012 } from "./opt-sys-012.ts";
import { optSys013 } from "./opt-sys-013.ts";
import { optSys014 } from "./opt-sys-014.ts";
import { optSys015 } from "./opt-sys-015.ts";
import { optSys016 } from "./opt-sys-016.ts";
import { optSys017 } from "./opt-sys-017.ts";
import { optSys018 } from "./opt-sys-018.ts";
import { optSys019 } from "./opt-sys-019.ts";
import { optSys020 } from "./opt-sys-020.ts";
import { optSys021 } from "./opt-sys-021.ts";
import { optSys022 } from "./opt-sys-022.ts";
import { optSys023 } from "./opt-sys-023.ts";
import { optSys024 } from "./opt-sys-024.ts";
import { optSys025 } from "./opt-sys-025.ts";
import { optSys026 } from "./opt-sys-026.ts";

export const OPT_SYS_CHECKS: readonly Check[] = [
  optSys001,
  optSys002,
  optSys003,
  optSys004,
  optSys005,
  optSys006,
  optSys007,
  optSys008,
  optSys009,
  optSys010,
  optSys011,
  optSys012,
  optSys013,
  optSys014,
  optSys015,
  optSys016,
  optSys017,
  optSys018,
  optSys019,
  optSys020,
  optSys021,
  optSys022,
  optSys023,
  optSys024,
  optSys025,
  optSys026,
];
