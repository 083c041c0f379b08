import { createRedactor, type NamedSecret, type Redactor } from './redact.js';

/** How long a handled value stays in a process's log redaction, and how many are kept. */
const REMEMBER_MS = 60 * 60 * 1000;
const REMEMBER_MAX = 2_000;

/**
 * RecentSecrets holds the secret values this process handled lately (sealed on the API, opened
 * on the worker) so that its log lines are redacted by value, whatever path a value took into a
 * log record (an error message, a serialized object): pino's `hooks.streamWrite` runs every
 * finished line through `redactLine`. It complements pino's redaction by path. With nothing
 * remembered a line is passed through untouched.
 */
export class RecentSecrets {
  private readonly seen = new Map<string, { name: string; at: number }>();
  private redactor: Redactor | null = null;

  remember(secrets: readonly NamedSecret[], now = Date.now()): void {
    for (const { name, value } of secrets) {
      if (!value) continue;
      this.seen.delete(value);
      this.seen.set(value, { name, at: now });
      this.redactor = null;
    }
    while (this.seen.size > REMEMBER_MAX) this.seen.delete(this.seen.keys().next().value!);
  }

  redactLine(line: string, now = Date.now()): string {
    if (this.seen.size === 0) return line;
    for (const [value, { at }] of this.seen) {
      if (now - at <= REMEMBER_MS) break; // insertion order: the rest are newer
      this.seen.delete(value);
      this.redactor = null;
    }
    this.redactor ??= createRedactor([...this.seen].map(([value, { name }]) => ({ name, value })));
    return this.redactor.redact(line);
  }
}

/** The process's one RecentSecrets: services remember into it, the logger's hook reads it. */
export const recentSecrets = new RecentSecrets();

/** secretLogHooks are pino options (`hooks`) that redact remembered values from every line. */
export const secretLogHooks = () => ({
  streamWrite: (line: string) => recentSecrets.redactLine(line),
});
