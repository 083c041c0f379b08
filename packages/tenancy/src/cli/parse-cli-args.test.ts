import { describe, expect, it } from 'vitest';
import { CliUsageError, parseCliArgs } from './parse-cli-args.js';

const tenant = `ten_${'0'.repeat(26)}`;
const key = `key_${'1'.repeat(26)}`;

describe('parseCliArgs', () => {
  it('parses each command', () => {
    expect(
      parseCliArgs([
        'tenant',
        'create',
        '--name',
        ' Acme ',
        '--max-pools',
        '5',
        '--requests-per-minute',
        '600',
      ]),
    ).toEqual({
      kind: 'tenant.create',
      name: 'Acme',
      quotas: { max_pools: 5, requests_per_minute: 600 },
      json: false,
    });
    expect(parseCliArgs(['tenant', 'list', '--json'])).toEqual({ kind: 'tenant.list', json: true });
    expect(
      parseCliArgs(['key', 'create', '--tenant', tenant, '--name', 'ci', '--role', 'member']),
    ).toEqual({
      kind: 'key.create',
      tenantId: tenant,
      name: 'ci',
      role: 'member',
      json: false,
    });
    expect(parseCliArgs(['key', 'revoke', key])).toEqual({
      kind: 'key.revoke',
      keyId: key,
      json: false,
    });
    expect(parseCliArgs([])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['key', '-h'])).toEqual({ kind: 'help' });
  });

  it('names what is wrong', () => {
    const cases: [string[], RegExp][] = [
      [['tenant', 'create'], /--name is required/],
      [['tenant', 'create', '--name', 'x', '--max-pools', 'many'], /--max-pools/],
      [['tenant', 'create', '--name', 'x', '--requests-per-minute', '0'], /--requests-per-minute/],
      [['key', 'create', '--tenant', 'acme', '--name', 'n', '--role', 'admin'], /--tenant/],
      [['key', 'create', '--tenant', tenant, '--name', 'n', '--role', 'root'], /--role/],
      [['key', 'revoke'], /key id/],
      [['key', 'revoke', key, 'more'], /unexpected argument: more/],
      [['tenant', 'create', '--name', 'x', '--nope'], /nope/],
      [['pool', 'create'], /unknown command: pool create/],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseCliArgs(argv), argv.join(' ')).toThrow(CliUsageError);
      expect(() => parseCliArgs(argv), argv.join(' ')).toThrow(message);
    }
  });
});
