/**
 * Preloaded into every test file's process (`npm test` passes `--import` to node --test, and
 * the runner hands its flags on to the files it spawns). Each file reports its verdicts to the
 * runner over its stdout, a pipe, and `--test-force-exit` ends the process as soon as its tests
 * are done: with the pipe's writes still queued, the last verdicts were lost and the run
 * reported fewer tests than ran (nodejs/node#64833). Blocking writes leave nothing queued.
 */
const handle = (process.stdout as unknown as { _handle?: { setBlocking?: (on: boolean) => void } })._handle;
handle?.setBlocking?.(true);
