import { namedSystems } from "./file-settings.ts";
import type { RawConfig } from "./schema.ts";
import type { Salvaged } from "./salvage.ts";

interface Issue {
  path: string;
  message: string;
}

type Auth = { creds?: string; nkey?: string; user?: string; token?: string } | undefined;

/** The ways to authenticate, in the order natsmon picks the one it uses (bus/connect.ts). */
const WAYS = ["creds", "nkey", "user", "token"] as const;

/**
 * A connection given more than one way to authenticate (creds and a user, say) uses the first
 * of them and ignores the rest: allowed, as an environment variable may set one over a file
 * that gives another, but said, so that the one ignored is not thought in use.
 */
export function authWarnings(view: Salvaged<RawConfig>): Issue[] {
  const warnings: Issue[] = [];
  const check = (at: string, auth: Auth) => {
    const given = WAYS.filter((way) => Boolean(auth?.[way]));
    if (given.length < 2) return;
    warnings.push({
      path: at,
      message:
        `gives ${given.join(" and ")}: natsmon authenticates with ${given[0]} and ignores the rest ` +
        `(it takes ${WAYS.join(", then ")}); remove what is not meant`,
    });
  };
  check("sink", view.sink);
  for (const [at, system] of namedSystems(view)) {
    check(`${at}.nats`, system?.nats);
    (system?.nats?.accounts ?? []).forEach((account, j) => check(`${at}.nats.accounts[${j}]`, account));
  }
  return warnings;
}
