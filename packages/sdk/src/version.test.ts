import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SDK_VERSION } from './version.js';

describe('SDK_VERSION', () => {
  it('is the version in package.json and the newest entry of CHANGELOG.md', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(SDK_VERSION).toBe(pkg.version);
    const changelog = readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8');
    expect(/^## \[?(\d+\.\d+\.\d+)/m.exec(changelog)?.[1]).toBe(pkg.version);
  });
});
