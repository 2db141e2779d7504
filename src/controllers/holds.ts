// What one reconcile holds until it ends (the watches of the kinds it
// applies, kept open while it renders and applies), let go together when it
// does, however it ends.
export class Holds {
  private readonly releases: (() => void)[] = [];

  /** Holds until the end what `release` lets go. */
  add(release: () => void): void {
    this.releases.push(release);
  }

  /** Holds what `hold` settles to; at the end it is let go once it has settled. */
  addPending(hold: Promise<() => void>): void {
    this.add(() => void hold.then((release) => release()));
  }

  /** Awaits `work` and `hold` together: what `hold` holds is kept (let go at the end) even when `work` fails first. */
  async alongside<T>(work: Promise<T>, hold: Promise<() => void>): Promise<T> {
    const [done, holding] = await Promise.allSettled([work, hold]);
    if (holding.status === 'fulfilled') this.add(holding.value);
    if (done.status === 'rejected') throw done.reason;
    if (holding.status === 'rejected') throw holding.reason;
    return done.value;
  }

  /** Lets go of everything held, each once. */
  releaseAll(): void {
    for (const release of this.releases.splice(0)) release();
  }
}
