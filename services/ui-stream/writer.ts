import type { Db, Sql } from '../../db/client';
import { appendFrames } from '../../db/ui-streams';
import type { UiFrame } from '../../domain/ui-message-stream';

/**
 * Writes one writer's frames to a stream as they come: frames queue in memory and go to Postgres in a
 * batch every `flushMs` (one INSERT, one NOTIFY), so a token is on the wire within that long and a
 * fast model does not cost a statement per token. `finish` writes what is left together with the
 * writer's last statements in one transaction.
 */
export class FrameWriter {
  private pending: (UiFrame | null)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private error: unknown = null;
  /** The stream is gone (its chat was deleted): nothing more is written. */
  gone = false;

  constructor(
    private readonly sql: Sql,
    private readonly orgId: string,
    private readonly streamId: string,
    private readonly source: string,
    private readonly flushMs = 25,
  ) {}

  push(...frames: (UiFrame | null)[]): void {
    this.pending.push(...frames);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.chain = this.chain
        .then(() => this.write(this.sql))
        .catch((error: unknown) => {
          this.error ??= error;
        });
    }, this.flushMs);
  }

  /** Waits for queued batches; throws the first write failure (the activity then fails and is retried). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
    if (this.error) throw this.error;
    await this.write(this.sql);
  }

  /** Writes the queued frames and `last`, then runs `work`, all in one transaction. */
  async finish<T>(last: (UiFrame | null)[], work: (tx: Db) => Promise<T>): Promise<T> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
    if (this.error) throw this.error;
    return this.sql.begin(async (tx) => {
      this.pending.push(...last);
      await this.write(tx);
      return work(tx);
    }) as Promise<T>;
  }

  private async write(db: Db): Promise<void> {
    if (this.pending.length === 0 || this.gone) return;
    const batch = this.pending;
    this.pending = [];
    const ids = await appendFrames(db, this.orgId, this.streamId, this.source, batch);
    if (ids === null) this.gone = true;
  }
}
