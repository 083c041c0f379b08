import { formsOf, type NamedSecret } from './redact.js';

/** How long a handled value stays in a process's log redaction, and how many are kept. */
const REMEMBER_MS = 60 * 60 * 1000;
const REMEMBER_MAX = 2_000;
/**
 * Forms at least this long are found by their first ANCHOR characters (one map lookup per
 * position of a line); shorter ones (short raw values) by one small sticky regex.
 */
const ANCHOR = 8;

interface Remembered {
  name: string;
  at: number;
  forms: string[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// The anchor is looked up by a rolling hash of the line's ANCHOR-character window (one multiply
// and add a position, no substring): a hit is only a candidate, confirmed with startsWith.
const BASE = 0x01000193;
let basePow = 1;
for (let k = 1; k < ANCHOR; k++) basePow = Math.imul(basePow, BASE);
const BASE_POW = basePow;

function anchorHash(text: string, start: number): number {
  let h = 0;
  for (let k = start; k < start + ANCHOR; k++) h = (Math.imul(h, BASE) + text.charCodeAt(k)) | 0;
  return h;
}

/**
 * RecentSecrets holds the secret values this process handled lately (sealed on the API, opened
 * on the worker) so that its log lines are redacted by value, whatever path a value took into a
 * log record (an error message, a serialized object): pino's `hooks.streamWrite` runs every
 * finished line through `redactLine`. It complements pino's redaction by path. With nothing
 * remembered a line is passed through untouched.
 *
 * Remembering is incremental: a value's forms (formsOf, the spellings the shared redactor looks
 * for) go into a map keyed by their first characters, so a claim with secrets costs its own
 * values, not a rebuild over every value kept (one regex over 2,000 values took ~0.9 s to build
 * and compile here, and a claim with secrets followed by a log line paid it each time). A line
 * is scanned once; at each position the longest form that starts there wins, as in the shared
 * redactor's longest-first alternation.
 *
 * Remembering is also lazy: `remember` only queues the values, and the next line to redact
 * indexes them first. A claim carrying secrets is on the claim hot path, and most of them are
 * never followed by a log line at all (a served API logs at `warn`), so the forms are computed
 * when a line needs them, not while the claim waits (the profile of bench:claim showed formsOf
 * and the indexing at about 0.1 ms of a claim's API time, in code that bursts never warm up).
 */
export class RecentSecrets {
  /** By value, oldest first (re-remembering moves a value to the end). */
  private readonly seen = new Map<string, Remembered>();
  /** Anchored forms: hash of the first ANCHOR characters → form → its values, oldest first. */
  private readonly byAnchor = new Map<number, Map<string, Set<string>>>();
  /** Short forms → the values that spell them, and the sticky regex over them (null: rebuild). */
  private readonly short = new Map<string, Set<string>>();
  private shortRegex: RegExp | null = null;

  /** Remembered and not yet indexed, oldest first (at most REMEMBER_MAX: older ones would go). */
  private pending: { name: string; value: string; at: number }[] = [];

  remember(secrets: readonly NamedSecret[], now = Date.now()): void {
    for (const { name, value } of secrets) if (value) this.pending.push({ name, value, at: now });
    if (this.pending.length > REMEMBER_MAX)
      this.pending.splice(0, this.pending.length - REMEMBER_MAX);
  }

  /** index what `remember` queued, in order (a value remembered again takes its newer name). */
  private settle(): void {
    const pending = this.pending;
    this.pending = [];
    for (const { name, value, at } of pending) {
      this.forget(value);
      const forms = formsOf(value);
      this.seen.set(value, { name, at, forms });
      for (const form of forms) this.index(form, value);
    }
    while (this.seen.size > REMEMBER_MAX) this.forget(this.seen.keys().next().value!);
  }

  redactLine(line: string, now = Date.now()): string {
    if (this.pending.length > 0) this.settle();
    for (const [value, { at }] of this.seen) {
      if (now - at <= REMEMBER_MS) break; // insertion order: the rest are newer
      this.forget(value);
    }
    if (this.seen.size === 0) return line;
    const shortRegex = this.short.size > 0 ? this.shortMatcher() : null;
    let out = '';
    let emitted = 0;
    let p = 0;
    // The hash of the window at p (valid while p + ANCHOR <= line.length).
    let h = line.length >= ANCHOR ? anchorHash(line, 0) : 0;
    while (p < line.length) {
      let best: string | null = null;
      const candidates = p + ANCHOR <= line.length ? this.byAnchor.get(h) : undefined;
      if (candidates)
        for (const form of candidates.keys())
          if ((best === null || form.length > best.length) && line.startsWith(form, p)) best = form;
      // Every anchored form is longer than every short one: a short form only where none starts.
      if (best === null && shortRegex) {
        shortRegex.lastIndex = p;
        best = shortRegex.exec(line)?.[0] ?? null;
      }
      if (best === null) {
        if (p + ANCHOR < line.length)
          h =
            (Math.imul((h - Math.imul(line.charCodeAt(p), BASE_POW)) | 0, BASE) +
              line.charCodeAt(p + ANCHOR)) |
            0;
        p++;
        continue;
      }
      out += `${line.slice(emitted, p)}[secret:${this.nameOf(best)}]`;
      p += best.length;
      emitted = p;
      if (p + ANCHOR <= line.length) h = anchorHash(line, p);
    }
    return emitted === 0 ? line : out + line.slice(emitted);
  }

  /** The name of the oldest remembered value that spells `form`. */
  private nameOf(form: string): string {
    const owners =
      form.length >= ANCHOR
        ? this.byAnchor.get(anchorHash(form, 0))?.get(form)
        : this.short.get(form);
    const value = owners?.values().next().value;
    return (value !== undefined && this.seen.get(value)?.name) || 'unknown';
  }

  private index(form: string, value: string) {
    if (form.length < ANCHOR) {
      let owners = this.short.get(form);
      if (!owners) {
        this.short.set(form, (owners = new Set()));
        this.shortRegex = null;
      }
      owners.add(value);
      return;
    }
    const anchor = anchorHash(form, 0);
    let forms = this.byAnchor.get(anchor);
    if (!forms) this.byAnchor.set(anchor, (forms = new Map()));
    let owners = forms.get(form);
    if (!owners) forms.set(form, (owners = new Set()));
    owners.add(value);
  }

  private forget(value: string) {
    const entry = this.seen.get(value);
    if (!entry) return;
    this.seen.delete(value);
    for (const form of entry.forms) {
      if (form.length < ANCHOR) {
        const owners = this.short.get(form);
        owners?.delete(value);
        if (owners?.size === 0) {
          this.short.delete(form);
          this.shortRegex = null;
        }
        continue;
      }
      const anchor = anchorHash(form, 0);
      const forms = this.byAnchor.get(anchor);
      const owners = forms?.get(form);
      owners?.delete(value);
      if (owners?.size === 0) forms!.delete(form);
      if (forms?.size === 0) this.byAnchor.delete(anchor);
    }
  }

  private shortMatcher(): RegExp {
    // Longest first, sticky: the match must start at lastIndex, as the anchored lookup does.
    this.shortRegex ??= new RegExp(
      [...this.short.keys()]
        .sort((a, b) => b.length - a.length)
        .map(escapeRegExp)
        .join('|'),
      'y',
    );
    return this.shortRegex;
  }
}

/** The process's one RecentSecrets: services remember into it, the logger's hook reads it. */
export const recentSecrets = new RecentSecrets();

/** secretLogHooks are pino options (`hooks`) that redact remembered values from every line. */
export const secretLogHooks = () => ({
  streamWrite: (line: string) => recentSecrets.redactLine(line),
});
