/**
 * A synthetic NATS system for benchmarks and demos: requests for `$SYS` monitoring data
 * flow in on a bus, replies shaped like nats-server's flow out. It owns the simulated
 * system's state, which moves on with each scrape.
 */
export { startSimulator } from "./simulator.ts";
export type { Simulator } from "./simulator.ts";
export { PROFILES, isProfileName } from "./profiles.ts";
export type { Profile, ProfileName } from "./profiles.ts";
export { SimSystem } from "./model.ts";
