import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EnvError, parseEnv } from './parse-env.js';
import { envVars } from './vars.js';

const Schema = z.object({
  API_PORT: envVars.port(8080),
  DATABASE_URL: envVars.databaseUrl(),
  DEBUG: envVars.boolean(false),
});

describe('parseEnv', () => {
  it('applies defaults and coercions', () => {
    const env = parseEnv(Schema, { DATABASE_URL: 'postgresql://x@localhost/db' });
    expect(env).toEqual({
      API_PORT: 8080,
      DATABASE_URL: 'postgresql://x@localhost/db',
      DEBUG: false,
    });
    expect(
      parseEnv(Schema, { DATABASE_URL: 'postgres://a/b', DEBUG: 'yes', API_PORT: '9' }).DEBUG,
    ).toBe(true);
  });

  it('names every bad variable and never echoes its value', () => {
    let caught: unknown;
    try {
      parseEnv(Schema, {
        API_PORT: 'seventy',
        DATABASE_URL: 'mysql://secret-password@h/db',
        DEBUG: 'maybe',
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const err = caught as EnvError;
    expect(err.variables.sort()).toEqual(['API_PORT', 'DATABASE_URL', 'DEBUG']);
    expect(err.message).toContain('DATABASE_URL');
    expect(err.message).not.toContain('secret-password');
  });

  it('reports a missing required variable by name', () => {
    expect(() => parseEnv(Schema, {})).toThrow(/DATABASE_URL/);
  });
});
