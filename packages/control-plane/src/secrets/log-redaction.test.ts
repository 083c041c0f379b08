import { describe, expect, it } from 'vitest';
import { RecentSecrets } from './log-redaction.js';
import { createRedactor, formsOf } from './redact.js';

describe('RecentSecrets (log lines)', () => {
  it('redacts remembered values from log lines, JSON-escaped too, and forgets them after an hour', () => {
    const recent = new RecentSecrets();
    const line = (v: string) => `${JSON.stringify({ msg: `failed with ${v}` })}\n`;
    expect(recent.redactLine(line('pa"ss\\word'))).toBe(line('pa"ss\\word'));
    recent.remember([{ name: 'DB_PASSWORD', value: 'pa"ss\\word' }], 1_000);
    expect(recent.redactLine(line('pa"ss\\word'), 2_000)).toBe(line('[secret:DB_PASSWORD]'));
    expect(recent.redactLine(line('pa"ss\\word'), 1_000 + 3_600_001)).toBe(line('pa"ss\\word'));
  });

  it('redacts as the shared redactor does: every form, longest first, short values too', () => {
    // Seeded, so a failure reproduces: nested values, shared prefixes, short and odd characters.
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    const alphabet = 'abcdefgh+/=%&" \\é';
    const word = (len: number) =>
      Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
    const values = new Set<string>(['ab', 'x', 'token-123', 'token-123-and-more', 'pa"ss\\w']);
    while (values.size < 60) values.add(word(1 + rand(30)));
    const secrets = [...values].map((value, i) => ({ name: `S${i}`, value }));
    const recent = new RecentSecrets();
    recent.remember(secrets, 0);
    const shared = createRedactor(secrets);
    const pieces = secrets.flatMap((s) => formsOf(s.value));
    for (let i = 0; i < 300; i++) {
      const line = Array.from({ length: 1 + rand(6) }, () =>
        rand(2) ? pieces[rand(pieces.length)]! : word(rand(12)),
      ).join(rand(2) ? ' ' : '');
      expect(recent.redactLine(line, 1), line).toBe(shared.redact(line));
    }
  });

  it('forgets the oldest past its bound, and a value re-remembered takes its new name', () => {
    const recent = new RecentSecrets();
    recent.remember([{ name: 'OLD', value: 'first-secret-value' }], 0);
    recent.remember(
      Array.from({ length: 2_000 }, (_, i) => ({ name: `N${i}`, value: `value-number-${i}` })),
      1,
    );
    expect(recent.redactLine('first-secret-value value-number-1999', 2)).toBe(
      'first-secret-value [secret:N1999]',
    );
    recent.remember([{ name: 'RENAMED', value: 'value-number-5' }], 3);
    expect(recent.redactLine('value-number-5', 4)).toBe('[secret:RENAMED]');
  });
});
