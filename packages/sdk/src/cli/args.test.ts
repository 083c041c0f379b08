import { describe, expect, it } from 'vitest';
import { closest, parseCommandLine, UsageError, type OptionDefs } from './args.js';

const options: OptionDefs = {
  ttl: { type: 'string', description: '' },
  json: { type: 'boolean', description: '' },
  follow: { type: 'boolean', short: 'f', description: '' },
};

describe('parseCommandLine (strict)', () => {
  it('refuses an unknown flag and names the closest known one', () => {
    expect(() => parseCommandLine(['default', '--tl', '60'], options)).toThrow(
      'unknown flag --tl; did you mean --ttl?',
    );
    expect(() => parseCommandLine(['--jsn'], options)).toThrow(
      'unknown flag --jsn; did you mean --json?',
    );
    expect(() => parseCommandLine(['--frobnicate'], options)).toThrow(
      /^unknown flag --frobnicate$/,
    );
    expect(() => parseCommandLine(['-x'], options)).toThrow(UsageError);
  });

  it('says which flag lacks a value, and which takes none', () => {
    expect(() => parseCommandLine(['--ttl'], options)).toThrow('--ttl needs a value');
    expect(() => parseCommandLine(['--json=yes'], options)).toThrow('--json takes no value');
  });

  it('reads values, short flags, positionals, and leaves what follows -- alone', () => {
    const parsed = parseCommandLine(['clm_x', '--ttl=60', '-f', '--', 'ls', '--json'], options);
    expect(parsed).toEqual({
      positionals: ['clm_x'],
      options: { ttl: '60', follow: true },
      rest: ['ls', '--json'],
    });
  });

  it('suggests only near misses', () => {
    expect(closest('--tl', ['--ttl', '--json'])).toBe('--ttl');
    expect(closest('pols', ['pools', 'claims'])).toBe('pools');
    expect(closest('--x', ['--ttl', '--json'])).toBeUndefined();
  });
});
