/**
 * Waits for `work` at most `ms`: true if it settled in time (resolved or rejected), false if
 * not. For steps of a stop that wait on a server that may never answer (a stuck sink): the
 * stop goes on, and what was left is closed with the process.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
