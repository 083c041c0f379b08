// The real-node egress suite runs desktop-browser (scripts/images/build.mjs): the minimal desktop
// plus the browsers it drives and certutil, instead of the full desktop, whose Debian layer
// (LibreOffice, CJK fonts, FFmpeg…: 1,835 MiB) no test needs and which cost 543-561 s of a fresh
// machine's `npm test`. Its extra packages must stay ones the published desktop ships.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { imageConfig, IMAGES, TEST_IMAGES } from '../../scripts/images/build.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const listFile = 'packages/driver-guest/desktop-packages.json';
const lists = JSON.parse(readFileSync(join(root, listFile), 'utf8')) as {
  minimal: string[];
  apps: string[];
  packages: string[];
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('desktop-browser, the egress suite’s image', () => {
  it('is the minimal desktop, tini, both browsers and certutil: no office, no CJK fonts', () => {
    const { packages } = imageConfig('desktop-browser');
    expect(packages).toEqual([
      ...lists.minimal,
      'tini',
      'chromium',
      'firefox-esr',
      'libnss3-tools',
    ]);
    for (const heavy of ['libreoffice-writer', 'libreoffice-calc', 'fonts-noto-cjk', 'ffmpeg'])
      expect(packages).not.toContain(heavy);
    // The published image is still the full list.
    expect(imageConfig('desktop').packages).toEqual([...lists.packages, 'tini']);
    // Same Dockerfile, so the same user, entrypoint and environment as the published desktop.
    const { packages: _b, ...browserRest } = imageConfig('desktop-browser');
    const { packages: _d, ...desktopRest } = imageConfig('desktop');
    expect(browserRest).toEqual(desktopRest);
  });

  it('is what the test images and the real-node builds name, not the full desktop', () => {
    expect(TEST_IMAGES).toContain('desktop-browser');
    expect(TEST_IMAGES).not.toContain('desktop');
    const beside = readFileSync(join(root, 'scripts/lib/real-node-beside.mjs'), 'utf8');
    const names = /REAL_NODE_IMAGES = Object\.freeze\(\[([^\]]*)\]/.exec(beside)?.[1] ?? '';
    expect(names).toContain("'desktop-browser'");
    expect(names).not.toMatch(/'desktop'/);
  });

  it('refuses an extra package the published desktop does not ship', () => {
    // A copy of the Dockerfile with a package list whose apps lack firefox-esr.
    const copy = mkdtempSync(join(tmpdir(), 'cubicle-browser-image-'));
    dirs.push(copy);
    mkdirSync(join(copy, 'images'), { recursive: true });
    cpSync(join(root, 'images/desktop'), join(copy, 'images/desktop'), { recursive: true });
    mkdirSync(join(copy, 'packages/driver-guest'), { recursive: true });
    const apps = lists.apps.filter((p) => p !== 'firefox-esr');
    writeFileSync(join(copy, listFile), JSON.stringify({ ...lists, apps }));
    expect(IMAGES['desktop-browser']!.apps).toContain('firefox-esr');
    expect(() => imageConfig('desktop-browser', copy)).toThrow(
      /desktop-browser: firefox-esr not in desktop-packages\.json's apps/,
    );
    // The same copy with the real lists is accepted: the refusal is about the package.
    writeFileSync(join(copy, listFile), JSON.stringify(lists));
    expect(imageConfig('desktop-browser', copy).packages).toContain('firefox-esr');
  });
});
