/** The jetstream family of checks, in code order. */
import type { Check } from "../check.ts";
import { jetstream001 } from "./jetstream-001.ts";
import { jetstream002 } from "./jetstream-002.ts";
import { jetstream003 } from "./jetstream-003.ts";
import { jetstream004 } from "./jetstream-004.ts";
import { jetstream005 } from "./jetstream-005.ts";
import { jetstream006 } from "./jetstream-006.ts";
import { jetstream007 } from "./jetstream-007.ts";
import { jetstream008 } from "./jetstream-008.ts";
import { jetstream009 } from "./jetstream-009.ts";
import { jetstream010 } from "./jetstream-010.ts";
import { jetstream011 } from "./jetstream-011.ts";
import { jetstream013 } from "./jetstream-013.ts";
import { jetstream014 } from "./jetstream-014.ts";
import { jetstream015 } from "./jetstream-015.ts";
import { jetstream017 } from "./jetstream-017.ts";
import { jetstream018 } from "./jetstream-018.ts";
import { jetstream019 } from "./jetstream-019.ts";
import { jetstream020 } from "./jetstream-020.ts";
import { jetstream021 } from "./jetstream-021.ts";
import { jetstream022 } from "./jetstream-022.ts";
import { jetstream023 } from "./jetstream-023.ts";
import { jetstream024 } from "./jetstream-024.ts";
import { jetstream025 } from "./jetstream-025.ts";

export const JETSTREAM_CHECKS: readonly Check[] = [
  jetstream001,
  jetstream002,
  jetstream003,
  jetstream004,
  jetstream005,
  jetstream006,
  jetstream007,
  jetstream008,
  jetstream009,
  jetstream010,
  jetstream011,
  jetstream013,
  jetstream014,
  jetstream015,
  jetstream017,
  jetstream018,
  jetstream019,
  jetstream020,
  jetstream021,
  jetstream022,
  jetstream023,
  jetstream024,
  jetstream025,
];
