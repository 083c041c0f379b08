import {
  createRedactor,
  type NamedSecret,
  type Redactor,
  type StreamRedactor,
} from '../secrets/redact.js';

/**
 * RunRedaction is what a run's output is redacted against: every secret of its claim (its own,
 * the stored ones attached to it, those added while the run goes) and the stored secrets the run
 * named. Not only the named ones: any process of the sandbox can read the claim's secrets
 * directory (`cat /run/cubicle/secrets/NAME` in a run that names nothing printed the value into
 * run events, SSE answers and `run_events`). The set only grows during a run: a value deleted
 * from the claim meanwhile may still be in a process's memory, so it stays redacted.
 *
 * Streams made by `stream()` follow the set: the first chunk after it grew is pushed through a
 * redactor of the larger set together with the tail the old one held back (StreamRedactor.release),
 * so a value split across that boundary is still caught.
 */
export class RunRedaction {
  private readonly known = new Map<string, NamedSecret>();
  private redactor: Redactor = createRedactor([]);
  private version = 0;

  constructor(secrets: readonly NamedSecret[]) {
    this.add(secrets);
  }

  /** add takes secrets into the set (known ones change nothing); streams switch on their next chunk. */
  add(secrets: readonly NamedSecret[]): void {
    let grew = false;
    for (const s of secrets) {
      const key = `${s.name}\0${s.value}`;
      if (s.value && !this.known.has(key)) {
        this.known.set(key, s);
        grew = true;
      }
    }
    if (!grew) return;
    this.redactor = createRedactor([...this.known.values()]);
    this.version++;
  }

  get hasSecrets(): boolean {
    return this.redactor.hasSecrets;
  }

  /** stream starts the redaction of one output (stdout or stderr) of the run. */
  stream(): StreamRedactor {
    let inner = this.redactor.stream();
    let at = this.version;
    const current = (): { inner: StreamRedactor; carried: string } => {
      if (at === this.version) return { inner, carried: '' };
      const carried = inner.release();
      inner = this.redactor.stream();
      at = this.version;
      return { inner, carried };
    };
    return {
      push: (chunk) => {
        const { inner: now, carried } = current();
        return now.push(carried + chunk);
      },
      end: () => {
        const { inner: now, carried } = current();
        return now.push(carried) + now.end();
      },
      release: () => inner.release(),
    };
  }
}
