/**
 * Whole-line forwarding of the children's output.
 *
 * Before, every child inherited the supervisor's stdout: all processes wrote into one
 * pipe, and once its reader fell behind a write longer than PIPE_BUF (4 KiB) went in
 * pieces, so another process's line could land inside it (docs/RELIABILITY.md section 2,
 * "Stdout not read"). Now each child writes into a pipe of its own and the supervisor
 * copies whole lines to its stdout: one process writes there, so lines never mix.
 *
 * Bounded: at most MAX_LINE_BYTES of an unfinished line is held per child stream; a
 * longer line is cut (its first CUT_HEAD_CHARS are reported with its length, the rest is
 * skipped up to its newline). While the supervisor's stdout is not drained every child
 * stream is paused, so the child's own writes back up into the child (where the REST
 * front's log sink bounds and counts them) instead of into the supervisor's memory: at
 * most the stream's high-water mark plus one read per child is buffered here.
 */
import type { Readable, Writable } from 'node:stream';

/**
 * Longest child line forwarded whole. Log lines are a few hundred bytes; the longest we
 * write are error lines with a stack (a few KiB). 1 MiB leaves room for any of them and
 * is more than one pipe read (64 KiB), so an ordinary line inside one read is never cut.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** Characters of a cut line kept in the report: enough to see which log line it was. */
export const CUT_HEAD_CHARS = 256;

export interface CutLine {
  /** Length of the whole line in bytes, newline excluded. */
  bytes: number;
  /** Its first CUT_HEAD_CHARS characters. */
  head: string;
}

const NL = 0x0a;

/** Splits a byte stream into whole lines, holding at most `maxLine` bytes of an unfinished one. */
export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The line being skipped because it is too long. */
  private cutting: CutLine | null = null;

  constructor(private readonly maxLine = MAX_LINE_BYTES) {}

  /**
   * Takes a chunk; returns, in order, the whole lines it completes (as buffers ending in
   * a newline, consecutive lines joined) and the lines that had to be cut.
   */
  push(chunk: Buffer): (Buffer | CutLine)[] {
    const out: (Buffer | CutLine)[] = [];
    let run: Buffer[] = [];
    const flushRun = (): void => {
      if (run.length > 0) out.push(run.length === 1 ? run[0]! : Buffer.concat(run));
      run = [];
    };
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) {
        this.hold(chunk.subarray(start));
        break;
      }
      const piece = chunk.subarray(start, nl + 1);
      if (this.cutting) {
        this.cutting.bytes += piece.length - 1;
        flushRun();
        out.push(this.cutting);
        this.cutting = null;
      } else if (this.heldBytes + piece.length - 1 > this.maxLine) {
        flushRun();
        out.push(this.cut(piece.subarray(0, piece.length - 1)));
        this.cutting = null;
      } else {
        if (this.heldBytes > 0) run.push(...this.held);
        run.push(piece);
        this.held = [];
        this.heldBytes = 0;
      }
      start = nl + 1;
    }
    flushRun();
    return out;
  }

  /** What is left at the end of the stream, as a last line (a newline added), or a cut. */
  end(): Buffer | CutLine | null {
    if (this.cutting) {
      const c = this.cutting;
      this.cutting = null;
      return c;
    }
    if (this.heldBytes === 0) return null;
    const b = Buffer.concat([...this.held, Buffer.of(NL)]);
    this.held = [];
    this.heldBytes = 0;
    return b;
  }

  private hold(piece: Buffer): void {
    if (this.cutting) {
      this.cutting.bytes += piece.length;
      return;
    }
    if (this.heldBytes + piece.length > this.maxLine) {
      this.cutting = this.cut(piece);
      return;
    }
    // A copy: holding a slice would keep the whole read buffer alive.
    this.held.push(Buffer.from(piece));
    this.heldBytes += piece.length;
  }

  /** Starts (or makes) the report of a cut line from what is held plus `piece`. */
  private cut(piece: Buffer): CutLine {
    const all = Buffer.concat([...this.held, piece.subarray(0, CUT_HEAD_CHARS * 4)]);
    const c: CutLine = { bytes: this.heldBytes + piece.length, head: all.toString('utf8').slice(0, CUT_HEAD_CHARS) };
    this.held = [];
    this.heldBytes = 0;
    return c;
  }
}

/**
 * Copies whole lines of several child streams into one output. `onCut` reports a cut
 * line; it is called between the writes, so its own line lands where the cut line was.
 */
export class LineForwarder {
  private readonly sources = new Set<Readable>();
  private blocked = false;

  constructor(private readonly out: Writable) {
    out.on('drain', () => {
      this.blocked = false;
      for (const s of this.sources) s.resume();
    });
  }

  /** Child streams attached now. */
  get attached(): number {
    return this.sources.size;
  }

  /** Forwards `src` until it ends. */
  attach(src: Readable, onCut: (c: CutLine) => void): void {
    const split = new LineSplitter();
    this.sources.add(src);
    const emit = (items: (Buffer | CutLine)[]): void => {
      for (const it of items) {
        if (Buffer.isBuffer(it)) {
          if (!this.out.write(it)) this.block();
        } else onCut(it);
      }
    };
    src.on('data', (chunk: Buffer | string) => emit(split.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
    const done = (): void => {
      if (!this.sources.delete(src)) return;
      const last = split.end();
      if (last) emit([last]);
    };
    src.on('end', done);
    src.on('close', done);
    // A read error ends the stream's forwarding; the child's exit is handled elsewhere.
    src.on('error', done);
    if (this.blocked) src.pause();
  }

  /**
   * Resolves once every attached stream has ended and the output holds nothing unwritten
   * (stdout to a pipe is written asynchronously: exiting earlier would lose the last
   * lines), or after `timeoutMs`, whichever comes first.
   */
  flushed(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const started = performance.now();
      const check = (): void => {
        if ((this.sources.size === 0 && this.out.writableLength === 0) || performance.now() - started >= timeoutMs) resolve();
        // Polled, not event-driven: the last `end` and the last write completion have no
        // common event; 10 ms is far below the shutdown budget and costs nothing.
        else setTimeout(check, 10).unref();
      };
      check();
    });
  }

  private block(): void {
    if (this.blocked) return;
    this.blocked = true;
    for (const s of this.sources) s.pause();
  }
}
