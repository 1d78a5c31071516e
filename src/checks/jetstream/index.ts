/** The jetstream family of checks, in code order. */
import type { Check } from "../check.ts";
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
