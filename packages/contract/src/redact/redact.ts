/** A secret as the redactor needs it: the name it is replaced by and the value to find. */
export interface NamedSecret {
  name: string;
  value: string;
}

/**
 * StreamRedactor redacts a text that arrives in chunks (run output): a value split across two
 * chunks is still found, because the longest tail of what has arrived that could begin a secret
 * is held back until the next chunk (or end) decides it.
 */
export interface StreamRedactor {
  /** push takes the next chunk and returns what can be emitted now, redacted. */
  push(chunk: string): string;
  /** end returns whatever was held back, redacted. */
  end(): string;
  /**
   * release returns what is held back as it arrived (not redacted) and forgets it, so a stream
   * whose set of secrets grows can hand its tail to a redactor of the larger set: the caller
   * must push it there, never emit it.
   */
  release(): string;
}

export interface Redactor {
  /** redact replaces every form of every value in `text` with `[secret:NAME]`. */
  redact(text: string): string;
  /** redactDeep redacts every string (and key) inside a JSON-like value; other values are kept. */
  redactDeep<T>(value: T): T;
  /** stream starts a chunk-aware redaction of one output (stdout, stderr…). */
  stream(): StreamRedactor;
  /** hasSecrets is false when there is nothing to redact (every call is then the identity). */
  hasSecrets: boolean;
}

/**
 * Base64 forms shorter than this are not looked for: a short value's base64 core would match
 * unrelated base64 text. The raw value is always redacted, whatever its length.
 */
const MIN_DERIVED_FORM = 8;

/**
 * base64Cores are the runs of base64 characters that a value produces wherever it sits inside a
 * longer base64 text: one per byte alignment (0, 1, 2 bytes before it), trimmed of the
 * characters that would also hold bits of the neighbouring bytes.
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const cores: string[] = [];
  for (const offset of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    const skip = offset === 0 ? 0 : offset + 1;
    const exact = Math.floor((padded.length * 8) / 6);
    const core = encoded.slice(skip, exact);
    if (core.length >= MIN_DERIVED_FORM) cores.push(core);
  }
  return cores;
}

/** formsOf lists the spellings of a value looked for: raw, base64 (standard and URL-safe), URL-encoded, JSON-escaped. */
export function formsOf(value: string): string[] {
  const forms = new Set<string>([value]);
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  if (b64.length >= MIN_DERIVED_FORM) forms.add(b64);
  for (const core of base64Cores(value)) {
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()));
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(encodeURI(value));
  // As a JSON string shows it (log lines, stored JSON): quotes, backslashes, controls escaped.
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.delete('');
  return [...forms];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * createRedactor builds a redactor for a set of secrets. Longer forms are tried first, so a
 * value that contains another secret's value is replaced whole.
 */
export function createRedactor(secrets: readonly NamedSecret[]): Redactor {
  const nameOf = new Map<string, string>();
  for (const { name, value } of secrets)
    if (value) for (const form of formsOf(value)) if (!nameOf.has(form)) nameOf.set(form, name);
  const patterns = [...nameOf.keys()].sort((a, b) => b.length - a.length);
  const hasSecrets = patterns.length > 0;
  const regex = hasSecrets ? new RegExp(patterns.map(escapeRegExp).join('|'), 'g') : null;

  const redact = (text: string): string =>
    regex && text.length > 0
      ? text.replace(regex, (match) => `[secret:${nameOf.get(match)!}]`)
      : text;

  const redactDeep = <T>(value: T): T => {
    if (!regex) return value;
    if (typeof value === 'string') return redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
    if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v);
      return out as T;
    }
    return value;
  };

  /** heldTail: the length of the longest tail of `text` (after `from`) that is a proper prefix of a form. */
  const heldTail = (text: string, from: number): number => {
    let longest = 0;
    for (const p of patterns) {
      const start = Math.max(from, text.length - (p.length - 1));
      const first = p.charCodeAt(0);
      for (let q = start; q < text.length - longest; q++) {
        if (text.charCodeAt(q) === first && p.startsWith(text.slice(q))) {
          longest = text.length - q;
          break;
        }
      }
    }
    return longest;
  };

  const stream = (): StreamRedactor => {
    let held = '';
    return {
      push(chunk) {
        if (!regex) return chunk;
        const text = held + chunk;
        // Whole matches first; then hold back a tail that could still become one.
        let lastEnd = 0;
        regex.lastIndex = 0;
        for (const m of text.matchAll(regex)) lastEnd = m.index + m[0].length;
        const keep = heldTail(text, lastEnd);
        held = text.slice(text.length - keep);
        return redact(text.slice(0, text.length - keep));
      },
      end() {
        const rest = redact(held);
        held = '';
        return rest;
      },
      release() {
        const raw = held;
        held = '';
        return raw;
      },
    };
  };

  return { redact, redactDeep, stream, hasSecrets };
}
