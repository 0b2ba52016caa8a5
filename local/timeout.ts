/** A function's outcome within a time limit, as Lambda and API Gateway give up on one: the call is not stopped, and may still be running. */
export type Outcome<T> = { ok: true; result: T } | { ok: false; timedOut: boolean; error: unknown };

/** What `run` gives within `ms`: its result, its error (a synchronous throw too), or a time-out. */
export async function withTimeout<T>(run: () => T | Promise<T>, ms: number): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, timedOut: true, error: new Error(`no answer within ${ms} ms`) }), ms);
  });
  const running = Promise.resolve()
    .then(run)
    .then(
      (result): Outcome<T> => ({ ok: true, result }),
      (error: unknown): Outcome<T> => ({ ok: false, timedOut: false, error }),
    );
  try {
    return await Promise.race([running, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
