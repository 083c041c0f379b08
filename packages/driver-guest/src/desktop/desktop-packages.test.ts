import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const list = JSON.parse(
  readFileSync(new URL('../../desktop-packages.json', import.meta.url), 'utf8'),
) as { minimal: string[]; apps: string[]; packages: string[] };

describe('desktop-packages.json', () => {
  it('is the minimal desktop plus the apps, nothing more and nothing twice', () => {
    expect(list.packages).toEqual([...list.minimal, ...list.apps]);
    expect(new Set(list.packages).size).toBe(list.packages.length);
  });

  it('has every app a LaunchApp name starts', () => {
    for (const p of ['chromium', 'firefox-esr', 'libreoffice-calc', 'libreoffice-gtk3'])
      expect(list.apps).toContain(p);
  });

  it('gives the browsers certutil, so they trust the egress CA (credentials injected at egress)', () => {
    // Chromium and Firefox read NSS databases, not the system bundle: egress-trust.ts writes the
    // CA into them with certutil. With the apps, since only the browsers need it.
    expect(list.apps).toContain('libnss3-tools');
    expect(list.minimal).not.toContain('libnss3-tools');
  });
});
