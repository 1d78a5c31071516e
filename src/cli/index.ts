/**
 * The `natsmon` command line: one file per command. `run` starts a node; the client
 * commands talk only to the API on the bus, exactly as a remote user would.
 */
export { runCommand } from "./run.ts";
export { configCommand } from "./config-check.ts";
export { systemsCommand } from "./systems.ts";
export { queryCommand } from "./query.ts";
export { simulateCommand } from "./simulate.ts";
export { dbCommand } from "./db.ts";
export { checksCommand } from "./checks.ts";
export { findingsCommand } from "./findings-watch.ts";
export { gatewayCommand } from "./gateway.ts";
export {
  readArrowStream,
  NoResponderError,
  StreamFailedError,
  StreamRefusedError,
  StreamTimeoutError,
} from "./stream-client.ts";
export type { ArrowStreamReader, ReadArrowStreamOptions, StreamProgress } from "./stream-client.ts";
export { backupCommand } from "./backup.ts";
export { notifyCommand } from "./notify.ts";
export { deliveriesCommand } from "./deliveries.ts";
