/**
 * The order of a model's changes and rankings (Dtdr's concurrency notes). Changes (`learn`,
 * `forget`, `addTools`, `removeTools`, a background refit landing) run one at a time in the order
 * they were called, each after the rankings in flight when it was called. A ranking runs after the
 * changes called before it, except while one of them is refitting (`whileRefitting`): a refit or
 * a forget takes seconds on the calling thread or a worker, and a hung one up to `refitTimeout`, so
 * rankings called meanwhile answer from the model as it is instead of
 * waiting for it. A change marks only its refit so: the rest of it is quick and is waited for.
 */
export class ChangeQueue {
  /** The last change called (settles when it is applied or refused; never rejects). */
  private last: Promise<void> = Promise.resolve();
  /** Changes called and not yet applied. */
  pending = 0;
  /** Rankings in flight: a change called after them waits for them. */
  private readonly readers = new Set<Promise<unknown>>();
  /** Changes refitting now, and the promise that is resolved while any is (rankings stop waiting). */
  private refitting = 0;
  private refit = opening();

  /** Runs `change` after every change called before it and every ranking in flight now. */
  enqueue<T>(change: () => T | Promise<T>): Promise<T> {
    const readers = [...this.readers];
    this.pending++;
    const run = this.last
      .then(() => (readers.length > 0 ? Promise.allSettled(readers) : undefined))
      .then(change)
      .finally(() => {
        this.pending--;
      });
    this.last = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Runs `read` (a ranking) after the changes called before it, or at once while one of them refits. */
  read<T>(read: () => Promise<T>): Promise<T> {
    const work = this.pending > 0 ? Promise.race([this.last, this.refit.promise]).then(read) : read();
    this.readers.add(work);
    const done = () => void this.readers.delete(work);
    work.then(done, done);
    return work;
  }

  /** A change's refit: rankings called while it runs do not wait for it (they see the model as it is). */
  async whileRefitting<T>(work: () => Promise<T>): Promise<T> {
    if (this.refitting++ === 0) this.refit.open();
    try {
      return await work();
    } finally {
      if (--this.refitting === 0) this.refit = opening();
    }
  }

  /** Resolves when the changes called so far are applied or refused. */
  get settled(): Promise<void> {
    return this.last;
  }
}

/** A promise and the function that resolves it. */
function opening(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
