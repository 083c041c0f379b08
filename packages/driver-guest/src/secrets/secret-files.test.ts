import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSecretsDir, SecretFiles } from './secret-files.js';

describe('SecretFiles', () => {
  const dir = () => join(mkdtempSync(join(tmpdir(), 'secrets-test-')), 'secrets');

  it('writes one 0600 file per secret in a 0700 directory, and exclusive removes the rest', async () => {
    const files = new SecretFiles(dir());
    const first = await files.write({
      secrets: [
        { name: 'API_TOKEN', value: 'tok-1' },
        { name: 'OTHER', value: 'x' },
      ],
      exclusive: false,
    });
    expect(first.names).toEqual(['API_TOKEN', 'OTHER']);
    expect(statSync(files.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(files.dir, 'API_TOKEN')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(files.dir, 'API_TOKEN'), 'utf8')).toBe('tok-1');
    const second = await files.write({
      secrets: [{ name: 'API_TOKEN', value: 'tok-2' }],
      exclusive: true,
    });
    expect(second.names).toEqual(['API_TOKEN']);
    expect(readFileSync(join(files.dir, 'API_TOKEN'), 'utf8')).toBe('tok-2');
    // No temporary files are left behind by the atomic writes.
    expect(readdirSync(files.dir)).toEqual(['API_TOKEN']);
    expect((await files.delete({ names: ['API_TOKEN', 'ABSENT'] })).names).toEqual([]);
  });

  it('refuses a value over 64 KiB before writing anything', async () => {
    const files = new SecretFiles(dir());
    await expect(
      files.write({
        secrets: [
          { name: 'OK', value: 'fine' },
          { name: 'BIG', value: 'é'.repeat(40_000) },
        ],
        exclusive: false,
      }),
    ).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(await files.names()).toEqual([]);
  });

  it('resolves the directory: explicit setting, else a per-display tmpfs directory', () => {
    expect(resolveSecretsDir({ GUEST_SECRETS_DIR: '/x/y' }, ':3')).toBe('/x/y');
    const fallback = resolveSecretsDir({}, ':7');
    expect(fallback === '/run/cubicle/secrets' || fallback === '/dev/shm/cubicle-secrets-7').toBe(
      true,
    );
  });
});
