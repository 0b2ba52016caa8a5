/** Unref'd sleeps that a shutdown can end at once, so close() never waits out a latency or retry delay. */
export class WakeableSleeps {
  private readonly wakers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakers.add(done);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
