// Runs tasks one after another per key and concurrently across keys: the events of one call are
// stored in the order the webhooks brought them, while other calls do not wait behind a slow one.

export class KeyedTaskQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();

  get pending(): number {
    return this.running.size;
  }

  /** `task` must not throw: failures are the caller's to log. */
  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, settled);
    this.running.add(settled);
    void settled.then(() => {
      this.running.delete(settled);
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return settled;
  }

  /** Resolves when every task queued so far (and any they queue) has finished. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
