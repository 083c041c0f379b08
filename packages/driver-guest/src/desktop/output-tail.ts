/** The default cap on what a launcher keeps of one sandbox's stdout and stderr. */
export const OUTPUT_TAIL_BYTES = 64 * 1024;

/**
 * OutputTail keeps the last `cap` bytes of a stream (a sandbox's stdout and stderr, which its
 * holder can write at will): older bytes are dropped as new ones arrive, so what is stored never
 * exceeds the cap however much is written. Only the launcher holds it; nothing goes to a file.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes received and dropped (past the cap). */
  dropped = 0;

  constructor(readonly cap = OUTPUT_TAIL_BYTES) {}

  push(chunk: Buffer): void {
    if (chunk.length >= this.cap) {
      this.dropped += this.size + chunk.length - this.cap;
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.cap))];
      this.size = this.cap;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.cap) {
      const first = this.chunks[0]!;
      const excess = this.size - this.cap;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Bytes stored now (never more than the cap). */
  get storedBytes(): number {
    return this.size;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** lastLines is the end of the output for an error message: `count` lines joined by ' | '. */
  lastLines(count = 5): string {
    return this.text().trim().split('\n').slice(-count).join(' | ') || '(no output)';
  }
}
