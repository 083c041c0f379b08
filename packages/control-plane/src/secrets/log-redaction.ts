import { formsOf, type NamedSecret } from './redact.js';

/** How long a handled value stays in a process's log redaction, and how many are kept. */
const REMEMBER_MS = 60 * 60 * 1000;
const REMEMBER_MAX = 2_000;
/**
 * FREE_TEXT_MIN is the shortest form looked for inside text. Shorter values ("42", "abc") match
 * everywhere: before this bound a one-character secret rewrote most lines (37,525 of 42,487
 * `api.log` lines stopped being JSON). A shorter value is redacted only where a whole string
 * field of its own tenant's line equals it.
 */
export const FREE_TEXT_MIN = 8;

/**
 * Fields that hold identifiers and log structure: never rewritten, so a tenant's secret cannot
 * hide an id, a level or a time from the operator.
 */
const KEPT_FIELD = /^(id|.*_id|.*Id|level|time|pid|hostname|service|msg_id)$/;

/** The tenant a line belongs to: its first `"tenant_id":"…"` field (an escaped one never matches). */
const TENANT_FIELD = /"tenant_id":"([^"\\]{1,128})"/;

interface Remembered {
  tenantId: string;
  name: string;
  value: string;
  at: number;
  forms: string[];
}

// Forms are looked up by a rolling hash of the text's FREE_TEXT_MIN-character window (one
// multiply and add a position, no substring): a hit is only a candidate, confirmed with startsWith.
const BASE = 0x01000193;
let basePow = 1;
for (let k = 1; k < FREE_TEXT_MIN; k++) basePow = Math.imul(basePow, BASE);
const BASE_POW = basePow;

function anchorHash(text: string, start: number): number {
  let h = 0;
  for (let k = start; k < start + FREE_TEXT_MIN; k++)
    h = (Math.imul(h, BASE) + text.charCodeAt(k)) | 0;
  return h;
}

/** Which remembered values a line may be redacted with: one tenant's, or (no tenant) any. */
type Scope = { tenantId: string | null };

/**
 * RecentSecrets holds the secret values this process handled lately (sealed on the API, opened
 * on the worker), each with its tenant, so that log lines are redacted by value whatever path a
 * value took into a record (an error message, a serialized object). pino's `hooks.streamWrite`
 * runs every finished line through `redactLine`; pino's redaction by path comes first.
 *
 * Three rules keep the log an operator's tool:
 * - a line that names a tenant (`tenant_id`, bound on every authenticated request's logger) is
 *   redacted with that tenant's values only; a line without one with every tenant's;
 * - inside text only forms of at least FREE_TEXT_MIN characters are looked for; a shorter value
 *   only replaces a whole string field equal to it, in its own tenant's lines;
 * - a line that is JSON stays JSON: a hit is redacted inside the parsed strings and the line is
 *   serialised again; identifier fields (KEPT_FIELD) and keys are never rewritten.
 * A line without any candidate (the common case) is passed through untouched, without parsing.
 *
 * Remembering is lazy and incremental: `remember` only queues values (a claim with secrets is on
 * the claim hot path), the next line indexes them by their first characters.
 */
export class RecentSecrets {
  /** By tenant and value, oldest first (re-remembering moves a value to the end). */
  private readonly seen = new Map<string, Remembered>();
  /** Forms of at least FREE_TEXT_MIN: hash of the first characters → form → owners, oldest first. */
  private readonly byAnchor = new Map<number, Map<string, Set<Remembered>>>();
  /** Values shorter than FREE_TEXT_MIN per tenant (value → name): whole fields only. */
  private readonly short = new Map<string, Map<string, string>>();
  private pending: { tenantId: string; name: string; value: string; at: number }[] = [];

  remember(tenantId: string, secrets: readonly NamedSecret[], now = Date.now()): void {
    for (const { name, value } of secrets)
      if (value) this.pending.push({ tenantId, name, value, at: now });
    // Trimmed to the newest REMEMBER_MAX only once twice that waits: trimming at every call past
    // the bound moved 2,000 entries per secret in a process that logs too little to settle them
    // (an API at LOG_LEVEL=warn), ~10 µs a value on the claim path.
    if (this.pending.length > 2 * REMEMBER_MAX)
      this.pending.splice(0, this.pending.length - REMEMBER_MAX);
  }

  redactLine(line: string, now = Date.now()): string {
    if (this.pending.length > 0) this.settle();
    for (const [key, entry] of this.seen) {
      if (now - entry.at <= REMEMBER_MS) break; // insertion order: the rest are newer
      this.forget(key);
    }
    if (this.seen.size === 0) return line;
    const scope: Scope = { tenantId: TENANT_FIELD.exec(line)?.[1] ?? null };
    const shorts = scope.tenantId ? this.short.get(scope.tenantId) : undefined;
    const hasShort =
      shorts !== undefined && [...shorts.keys()].some((v) => line.includes(JSON.stringify(v)));
    if (!hasShort && this.redactText(line, scope) === line) return line;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return this.redactText(line, scope); // not JSON: text it is
    }
    const redacted = this.redactValue(record, scope, shorts, null);
    return `${JSON.stringify(redacted)}${line.endsWith('\n') ? '\n' : ''}`;
  }

  private redactValue(
    value: unknown,
    scope: Scope,
    shorts: Map<string, string> | undefined,
    key: string | null,
  ): unknown {
    if (typeof value === 'string') {
      if (key !== null && KEPT_FIELD.test(key)) return value;
      const whole = shorts?.get(value);
      return whole !== undefined ? `[secret:${whole}]` : this.redactText(value, scope);
    }
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v, scope, shorts, null));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.redactValue(v, scope, shorts, k);
      return out;
    }
    return value;
  }

  /** redactText replaces every form (≥ FREE_TEXT_MIN) of the scope's values, longest first. */
  private redactText(text: string, scope: Scope): string {
    if (text.length < FREE_TEXT_MIN || this.byAnchor.size === 0) return text;
    let out = '';
    let emitted = 0;
    let p = 0;
    let h = anchorHash(text, 0);
    while (p + FREE_TEXT_MIN <= text.length) {
      let best: string | null = null;
      let bestName = '';
      const candidates = this.byAnchor.get(h);
      if (candidates)
        for (const [form, owners] of candidates) {
          if (best !== null && form.length <= best.length) continue;
          if (!text.startsWith(form, p)) continue;
          const owner = this.ownerIn(owners, scope);
          if (owner) {
            best = form;
            bestName = owner.name;
          }
        }
      if (best === null) {
        if (p + FREE_TEXT_MIN < text.length)
          h =
            (Math.imul((h - Math.imul(text.charCodeAt(p), BASE_POW)) | 0, BASE) +
              text.charCodeAt(p + FREE_TEXT_MIN)) |
            0;
        p++;
        continue;
      }
      out += `${text.slice(emitted, p)}[secret:${bestName}]`;
      p += best.length;
      emitted = p;
      if (p + FREE_TEXT_MIN <= text.length) h = anchorHash(text, p);
    }
    return emitted === 0 ? text : out + text.slice(emitted);
  }

  /** The oldest owner of a form the scope may use. */
  private ownerIn(owners: Set<Remembered>, scope: Scope): Remembered | undefined {
    for (const owner of owners)
      if (scope.tenantId === null || owner.tenantId === scope.tenantId) return owner;
    return undefined;
  }

  /** index what `remember` queued, in order (a value remembered again takes its newer name). */
  private settle(): void {
    const pending = this.pending;
    this.pending = [];
    for (const { tenantId, name, value, at } of pending) {
      const key = `${tenantId}\0${value}`;
      this.forget(key);
      const entry: Remembered = { tenantId, name, value, at, forms: [] };
      this.seen.set(key, entry);
      if (value.length < FREE_TEXT_MIN) {
        let values = this.short.get(tenantId);
        if (!values) this.short.set(tenantId, (values = new Map()));
        values.set(value, name);
      }
      entry.forms = formsOf(value).filter((f) => f.length >= FREE_TEXT_MIN);
      for (const form of entry.forms) {
        const anchor = anchorHash(form, 0);
        let forms = this.byAnchor.get(anchor);
        if (!forms) this.byAnchor.set(anchor, (forms = new Map()));
        let owners = forms.get(form);
        if (!owners) forms.set(form, (owners = new Set()));
        owners.add(entry);
      }
    }
    while (this.seen.size > REMEMBER_MAX) this.forget(this.seen.keys().next().value!);
  }

  private forget(key: string) {
    const entry = this.seen.get(key);
    if (!entry) return;
    this.seen.delete(key);
    const values = this.short.get(entry.tenantId);
    if (values?.get(entry.value) === entry.name) values.delete(entry.value);
    if (values?.size === 0) this.short.delete(entry.tenantId);
    for (const form of entry.forms) {
      const anchor = anchorHash(form, 0);
      const forms = this.byAnchor.get(anchor);
      const owners = forms?.get(form);
      owners?.delete(entry);
      if (owners?.size === 0) forms!.delete(form);
      if (forms?.size === 0) this.byAnchor.delete(anchor);
    }
  }
}

/** The process's one RecentSecrets: services remember into it, the logger's hook reads it. */
export const recentSecrets = new RecentSecrets();

/** secretLogHooks are pino options (`hooks`) that redact remembered values from every line. */
export const secretLogHooks = () => ({
  streamWrite: (line: string) => recentSecrets.redactLine(line),
});
