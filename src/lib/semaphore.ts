// Bounds concurrent work (Argon2id hashes: 64 MiB and ~35 ms of CPU each) and the queue in front of it,
// so a login storm neither exhausts memory nor starves the event loop for other requests.
export class QueueFullError extends Error {}

export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(
    private readonly max: number,
    private readonly queueLimit: number,
  ) {}

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) {
      if (this.waiting.length >= this.queueLimit) throw new QueueFullError('Too many requests in flight');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
