import { describe, expect, it } from 'vitest';
import { createRedactor } from './redact.js';

const TOKEN = 'sk-live-4f9a/b+c d&e=Q7';

describe('createRedactor', () => {
  const r = createRedactor([
    { name: 'API_TOKEN', value: TOKEN },
    { name: 'SHORT', value: 'xy' },
  ]);

  it('replaces the raw value with its name', () => {
    expect(r.redact(`token=${TOKEN}; again ${TOKEN}`)).toBe(
      'token=[secret:API_TOKEN]; again [secret:API_TOKEN]',
    );
    expect(r.redact('a short xy value')).toBe('a short [secret:SHORT] value');
  });

  it('finds base64 forms, standalone and inside longer base64 at every alignment', () => {
    expect(r.redact(Buffer.from(TOKEN).toString('base64'))).not.toContain('c2stbGl2');
    for (const before of ['', 'a', 'ab', 'abc', 'user:']) {
      const encoded = Buffer.from(`${before}${TOKEN}!!`).toString('base64');
      const out = r.redact(`Authorization: Basic ${encoded}`);
      expect(out).toContain('[secret:API_TOKEN]');
      // What remains is not enough to rebuild the value: decoding it yields no long run of it.
      expect(Buffer.from(out.replace(/.*Basic /, ''), 'base64').toString()).not.toContain(
        TOKEN.slice(0, 8),
      );
    }
    const urlSafe = Buffer.from(`??${TOKEN}`).toString('base64url');
    expect(r.redact(urlSafe)).toContain('[secret:API_TOKEN]');
  });

  it('finds URL-encoded forms (percent, lower-case hex, form +)', () => {
    const enc = encodeURIComponent(TOKEN);
    expect(r.redact(`https://x.test/?t=${enc}`)).toBe('https://x.test/?t=[secret:API_TOKEN]');
    expect(r.redact(enc.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()))).toBe(
      '[secret:API_TOKEN]',
    );
    expect(r.redact(enc.replace(/%20/g, '+'))).toBe('[secret:API_TOKEN]');
  });

  it('redacts a value split across two chunks, at every split point', () => {
    for (let cut = 1; cut < TOKEN.length; cut++) {
      const s = r.stream();
      const out =
        s.push(`before ${TOKEN.slice(0, cut)}`) + s.push(`${TOKEN.slice(cut)} after`) + s.end();
      expect(out).toBe('before [secret:API_TOKEN] after');
    }
  });

  it('emits at once what cannot start a secret, holds back only a possible prefix', () => {
    const s = r.stream();
    expect(s.push('hello world\n')).toBe('hello world\n');
    expect(s.push('then sk-li')).toBe('then ');
    expect(s.push('ttle')).toBe('sk-little');
    expect(s.push('x')).toBe('');
    expect(s.end()).toBe('x');
  });

  it('release hands over the held tail unredacted, so a larger set can finish it', () => {
    const s = r.stream();
    expect(s.push(`x ${TOKEN.slice(0, 5)}`)).toBe('x ');
    expect(s.release()).toBe(TOKEN.slice(0, 5));
    expect(s.end()).toBe('');
  });

  it('redacts a value spread one character per chunk', () => {
    const s = r.stream();
    let out = '';
    for (const ch of `>${TOKEN}<`) out += s.push(ch);
    expect(out + s.end()).toBe('>[secret:API_TOKEN]<');
  });

  it('redacts deep inside JSON values, keys included', () => {
    const input = { a: [TOKEN, { [TOKEN]: 1, n: 2, b: `x${TOKEN}` }], ok: true };
    expect(r.redactDeep(input)).toEqual({
      a: ['[secret:API_TOKEN]', { '[secret:API_TOKEN]': 1, n: 2, b: 'x[secret:API_TOKEN]' }],
      ok: true,
    });
  });

  it('with no secrets is the identity', () => {
    const none = createRedactor([]);
    expect(none.hasSecrets).toBe(false);
    expect(none.redact('abc')).toBe('abc');
    expect(none.stream().push('abc')).toBe('abc');
  });
});
