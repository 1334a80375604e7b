/**
 * Deletes stored media older than `media.retentionDays`. Every instance runs it: listing and deleting
 * are idempotent (a second instance deleting the same object is a no-op), so no lock or leader is needed;
 * the cost of running it N times is N listings per sweep interval.
 */
import type { Logger } from 'pino';
import type { MediaStorage } from './media.storage.ts';

/** A `.part` file this old belongs to a writer that died (a live upload finishes long before). */
const abandonedAfterMs = 60 * 60_000;
export interface RetentionOptions {
  retentionDays: number;
  sweepMinutes: number;
  /** The first sweep waits a little so it does not compete with start-up (default 15 s). */
  firstSweepDelayMs?: number;
}

export class MediaRetention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private readonly storage: MediaStorage;
  private readonly options: RetentionOptions;
  private readonly log: Logger;

  constructor(storage: MediaStorage, options: RetentionOptions, log: Logger) {
    this.storage = storage;
    this.options = options;
    this.log = log;
  }

  start(): void {
    if (this.timer) return;
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        this.running ??= this.sweep()
          .catch((error: unknown) => this.log.warn({ err: (error as Error).message }, 'media retention sweep failed'))
          .finally(() => {
            this.running = null;
          });
        tick(this.options.sweepMinutes * 60_000);
      }, delay);
      this.timer.unref();
    };
    tick(this.options.firstSweepDelayMs ?? 15_000);
  }

  /** One pass: deletes every object created before `now − retentionDays`. */
  async sweep(now: Date = new Date()): Promise<{ deleted: number; abandoned: number }> {
    const cutoff = new Date(now.getTime() - this.options.retentionDays * 86_400_000);
    let deleted = 0;
    for await (const info of this.storage.listOlderThan(cutoff)) {
      await this.storage.delete(info);
      deleted += 1;
    }
    const abandoned = await this.storage.sweepAbandoned(new Date(now.getTime() - abandonedAfterMs));
    if (deleted > 0 || abandoned > 0) this.log.info({ deleted, abandoned, cutoff: cutoff.toISOString() }, 'media retention sweep');
    return { deleted, abandoned };
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
