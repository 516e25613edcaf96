import pino from 'pino';

/** What pino writes to: the standard output, or a stream a test reads. */
export interface LineSink {
  write(text: string): unknown;
}

/**
 * Gathers the log lines of one event-loop turn and writes them to standard output together,
 * synchronously, when the turn's I/O has been handled (setImmediate).
 *
 * Why not one of pino's destinations as it stands: pino's default for standard output writes
 * each line asynchronously on libuv's thread pool, a hand-off per line, with no bound on what
 * waits in memory when the reader is slow; a synchronous destination makes one write(2) per
 * line: on a request as cheap as a 404, either would take `LOG_LEVEL=info` past the CPU it may
 * add against `warn` (docs/performance.md). sonic-boom's own batching (minLength) waits for a
 * byte count, so at low traffic a line could wait indefinitely for the ones after it. Here a
 * line waits at most until the end of the turn that wrote it; under load one write carries
 * the lines of every request that turn completed.
 *
 * Lines keep their order (everything the root logger writes comes through here). A process
 * that exits writes what is pending first ('exit'); only one killed outright (SIGKILL, out of
 * memory) can lose the lines of its last turn. The write itself is sonic-boom's, which
 * retries a full pipe (EAGAIN) rather than dropping lines, as the synchronous destination does.
 */
export class LinesPerTurn implements LineSink {
  private pending = '';
  private scheduled = false;

  /** At most this much text waits: a turn that logs more is written as it goes. */
  static readonly MAX_PENDING = 64 * 1024;

  constructor(
    private readonly target: LineSink & { flushSync?(): void } = pino.destination({ dest: 1, sync: true }),
    onExit: (listener: () => void) => void = (listener) => process.once('exit', listener),
  ) {
    onExit(() => this.flushSync());
  }

  write(text: string): boolean {
    this.pending += text;
    if (this.pending.length >= LinesPerTurn.MAX_PENDING) this.writePending();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.endOfTurn);
    }
    return true;
  }

  /** Writes what is pending now (pino calls this on a fatal line, and at exit). */
  flushSync(): void {
    this.writePending();
    this.target.flushSync?.();
  }

  private readonly endOfTurn = () => {
    this.scheduled = false;
    this.writePending();
  };

  private writePending(): void {
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = '';
    this.target.write(text);
  }
}
