/** The server family of checks, in code order. */
import type { Check } from "../check.ts";
import { server001 } from "./server-001.ts";
import { server002 } from "./server-002.ts";
import { server003 } from "./server-003.ts";
import { server004 } from "./server-004.ts";
import { server005 } from "./server-005.ts";
import { server006 } from "./server-006.ts";
import { server007 } from "./server-007.ts";
import { server008 } from "./server-008.ts";
import { server009 } from "./server-009.ts";
import { server010 } from "./server-010.ts";
import { server011 } from "./server-011.ts";
import { server012 } from "./server-012.ts";
import { server013 } from "./server-013.ts";
import { server014 } from "./server-014.ts";
import { server015 } from "./server-015.ts";
import { server016 } from "./server-016.ts";
import { server017 } from "./server-017.ts";
import { server018 } from "./server-018.ts";
import { server019 } from "./server-019.ts";

export const SERVER_CHECKS: readonly Check[] = [
  server001,
  server002,
  server003,
  server004,
  server005,
  server006,
  server007,
  server008,
  server009,
  server010,
  server011,
  server012,
  server013,
  server014,
  server015,
  server016,
  server017,
  server018,
  server019,
];
