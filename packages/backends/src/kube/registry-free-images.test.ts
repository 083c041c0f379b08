// The registry-free image build (scripts/images/build.mjs, used by the real-node suite) takes the
// images' packages, user and entrypoint from images/*/Dockerfile itself, so the published recipe
// and the tested images cannot drift: one package list, read from the same places.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
interface ImageConfig {
  packages: string[];
  env: Record<string, string>;
  user: string;
  workdir: string;
  ports: string[];
  entrypoint: string[];
  cmd: string[];
  links: Record<string, string>;
  copies: { from: string; to: string }[];
  login: { name: string; home: string };
}
const { imageConfigOf } = (await import(
  pathToFileURL(`${root}scripts/images/dockerfile.mjs`).href
)) as {
  imageConfigOf: (root: string, name: string, options?: { listKey?: string }) => ImageConfig;
};
const lists = JSON.parse(
  readFileSync(`${root}packages/driver-guest/desktop-packages.json`, 'utf8'),
) as { packages: string[]; minimal: string[] };

describe('registry-free images read their Dockerfiles', () => {
  it('the desktop installs desktop-packages.json (full or minimal list) and tini', () => {
    expect(imageConfigOf(root, 'desktop').packages).toEqual([...lists.packages, 'tini']);
    expect(imageConfigOf(root, 'desktop', { listKey: 'minimal' }).packages).toEqual([
      ...lists.minimal,
      'tini',
    ]);
    // The full desktop's browsers trust the egress CA through NSS, written with certutil.
    expect(imageConfigOf(root, 'desktop').packages).toContain('libnss3-tools');
  });

  it('the desktop runs the launcher as uid 1000 `cubicle` with the guest port set', () => {
    const desktop = imageConfigOf(root, 'desktop');
    expect(desktop.entrypoint.slice(0, 4)).toEqual(['tini', '--', 'cubicle-desktop', 'start']);
    expect(desktop.user).toBe('1000:1000');
    expect(desktop.login).toEqual({ name: 'cubicle', home: '/home/cubicle' });
    expect(desktop.env.CUBICLE_GUEST_PORT).toBe('8080');
    expect(desktop.links['cubicle-desktop']).toBe(
      '/opt/cubicle/packages/driver-guest/dist/desktop/cli.js',
    );
  });

  it('api, worker and web run their node command under tini as uid 1000', () => {
    for (const name of ['api', 'worker', 'web']) {
      const image = imageConfigOf(root, name);
      // The worker also makes the egress CA and bound hosts' certificates with openssl.
      expect(image.packages, name).toEqual(name === 'worker' ? ['tini', 'openssl'] : ['tini']);
      expect(image.entrypoint, name).toEqual(['tini', '--']);
      expect(image.cmd[0], name).toBe('node');
      expect(image.user, name).toBe('1000:1000');
      expect(image.workdir, name).toBe(`/opt/cubicle/apps/${name}`);
    }
    const api = imageConfigOf(root, 'api');
    expect(api.links['cubicle-migrate']).toBe('/opt/cubicle/packages/db/dist/migrate/cli.js');
    expect(api.copies).toEqual([
      { from: 'images/api/cubicle-admin.mjs', to: '/opt/cubicle/images/api/cubicle-admin.mjs' },
    ]);
  });
});
