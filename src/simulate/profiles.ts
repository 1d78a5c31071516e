/** Sizes of a simulated system (issue: small, medium, large). */
export interface Profile {
  readonly servers: number;
  readonly streams: number;
  readonly consumers: number;
  readonly connections: number;
  /** Servers per cluster; clusters are named c1, c2, … */
  readonly clusterSize: number;
  readonly accounts: number;
}

export const PROFILES = {
  small: { servers: 3, streams: 100, consumers: 300, connections: 500, clusterSize: 3, accounts: 3 },
  medium: {
    servers: 20,
    streams: 2_000,
    consumers: 6_000,
    connections: 10_000,
    clusterSize: 5,
    accounts: 20,
  },
  large: {
    servers: 100,
    streams: 20_000,
    consumers: 60_000,
    connections: 50_000,
    clusterSize: 5,
    accounts: 100,
  },
} as const satisfies Record<string, Profile>;

export type ProfileName = keyof typeof PROFILES;

export function isProfileName(name: string): name is ProfileName {
  return Object.hasOwn(PROFILES, name);
}
