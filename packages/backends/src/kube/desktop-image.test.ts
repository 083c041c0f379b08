// The default desktop image and the local desktop launcher must install the same Debian
// packages and run the same launcher: one list (packages/driver-guest/desktop-packages.json).
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GUEST_PORT, VNC_PORT } from './names.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const dockerfile = read('images/desktop/Dockerfile');
const packageList = JSON.parse(read('packages/driver-guest/desktop-packages.json')) as {
  packages: string[];
};
// Join continuation lines so each instruction is one line.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('desktop image (images/desktop/Dockerfile)', () => {
  it('the local bootstrap installs exactly the shared list', async () => {
    const apt = (await import(pathToFileURL(`${root}scripts/lib/apt.mjs`).href)) as {
      APT_PACKAGES: { desktop: string[] };
    };
    expect(apt.APT_PACKAGES.desktop).toEqual(packageList.packages);
    expect(packageList.packages).toContain('xvfb');
    // certutil: the image's browsers trust the egress CA as local desktops' do.
    expect(packageList.packages).toContain('libnss3-tools');
  });

  it('installs its desktop packages from that list and names no other package but tini', () => {
    const copy = instructions.find((l) =>
      /^COPY\s+packages\/driver-guest\/desktop-packages\.json\s/.test(l),
    );
    expect(copy).toBeDefined();
    const copiedTo = copy?.split(/\s+/).at(-1) as string;
    const installs = instructions
      .filter((l) => l.startsWith('RUN'))
      .flatMap((l) => l.split('&&'))
      .filter((cmd) => /apt-get install/.test(cmd));
    const fromList = installs.filter((cmd) =>
      cmd.includes(`require("${copiedTo}").packages.join(" ")`),
    );
    expect(fromList).toHaveLength(1);
    const named = installs
      .map((cmd) => cmd.replace(/\$\(node -p '[^']*'\)/g, '').replace(/.*apt-get install/, ''))
      .flatMap((rest) => rest.split(/\s+/))
      .filter((w) => w && !w.startsWith('-'));
    expect(named).toEqual(['tini']);
  });

  it('runs the cubicle-desktop launcher of @cubicle/driver-guest as its entrypoint', () => {
    const entry = instructions.find((l) => l.startsWith('ENTRYPOINT'));
    const argv = JSON.parse(entry?.replace(/^ENTRYPOINT\s+/, '') ?? '[]') as string[];
    expect(argv.slice(0, 4)).toEqual(['tini', '--', 'cubicle-desktop', 'start']);
    const bin = (
      JSON.parse(read('packages/driver-guest/package.json')) as { bin: Record<string, string> }
    ).bin['cubicle-desktop'];
    expect(bin).toBe('./dist/desktop/cli.js');
    expect(dockerfile).toContain(
      'ln -s /opt/cubicle/packages/driver-guest/dist/desktop/cli.js /usr/local/bin/cubicle-desktop',
    );
    // Every flag the entrypoint passes is one the launcher parses.
    const cli = read('packages/driver-guest/src/desktop/cli.ts');
    for (const flag of argv.filter((a) => a.startsWith('--') && a !== '--'))
      expect(cli).toMatch(new RegExp(`['"]?${flag.slice(2)}['"]?: \\{ type:`));
  });

  it('serves the guest and VNC where the Pod spec and NetworkPolicy expect them', () => {
    const entry = instructions.find((l) => l.startsWith('ENTRYPOINT')) ?? '';
    const argv = JSON.parse(entry.replace(/^ENTRYPOINT\s+/, '')) as string[];
    expect(argv[argv.indexOf('--host') + 1]).toBe('0.0.0.0');
    expect(argv[argv.indexOf('--vnc-port') + 1]).toBe(String(VNC_PORT));
    expect(instructions).toContain(`ENV CUBICLE_GUEST_PORT=${GUEST_PORT}`);
    expect(instructions).toContain(`EXPOSE ${GUEST_PORT} ${VNC_PORT}`);
  });
});
