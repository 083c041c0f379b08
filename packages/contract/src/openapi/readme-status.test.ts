// The README's Status paragraph lists what is not built yet, each with the API word it will
// bring (`egress`, `handoffs`, …). This fails when the committed API document has that word —
// as a path segment or a property name anywhere in it — while the README still says "not yet",
// so the README cannot go on denying a feature users can call.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
const document = JSON.parse(
  readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'),
) as { paths: Record<string, unknown>; components?: unknown };

/** The backticked words of the Status paragraph's "Not yet" sentence. */
function notYetWords(text: string): string[] {
  const status = text.match(/\*\*Status\.\*\*([\s\S]*?)\n\n/)?.[1] ?? '';
  const notYet = status.slice(status.indexOf('Not yet'));
  return [...notYet.matchAll(/`([a-z][a-z0-9_-]*)`/g)].map((m) => m[1]!);
}

/** Every path segment and property name in the API document. */
function apiWords(doc: typeof document): Set<string> {
  const words = new Set<string>();
  for (const path of Object.keys(doc.paths)) for (const part of path.split('/')) words.add(part);
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value && typeof value === 'object')
        for (const name of Object.keys(value)) words.add(name);
      walk(value);
    }
  };
  walk(doc);
  return words;
}

describe('README status', () => {
  it('names what is not built yet with the words the API would use', () => {
    expect(notYetWords(readme).length).toBeGreaterThan(0);
  });

  it('says "not yet" of nothing the API already has', () => {
    const words = apiWords(document);
    expect(notYetWords(readme).filter((word) => words.has(word))).toEqual([]);
  });

  it('would catch a feature that landed (the check can fail)', () => {
    const landed = { ...document, paths: { ...document.paths, '/v1/claims/{id}/checkpoint': {} } };
    expect(notYetWords(readme).filter((word) => apiWords(landed).has(word))).toEqual(['checkpoint']);
  });
});
