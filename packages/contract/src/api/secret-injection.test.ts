import { describe, expect, it } from 'vitest';
import { PutStoredSecretRequest, SecretInjection } from './secret.js';

describe('SecretInjection', () => {
  const ok = { hosts: ['api.example.com'], header: 'Authorization', format: 'Bearer {value}' };

  it('binds exact hosts with a header and a format holding {value}', () => {
    expect(SecretInjection.parse(ok)).toEqual(ok);
    expect(SecretInjection.parse({ hosts: ['api.example.com'], header: 'X-Api-Key' })).toEqual({
      hosts: ['api.example.com'],
      header: 'X-Api-Key',
      format: '{value}',
    });
  });

  it('refuses wildcards, ports, upper case and empty host lists', () => {
    for (const hosts of [['*.example.com'], ['api.example.com:443'], ['API.example.com'], []])
      expect(SecretInjection.safeParse({ ...ok, hosts }).success).toBe(false);
  });

  it('refuses headers the point may not set and formats without {value} or with line breaks', () => {
    for (const header of ['Host', 'content-length', 'Transfer-Encoding', 'Bad Header', ''])
      expect(SecretInjection.safeParse({ ...ok, header }).success).toBe(false);
    for (const format of ['Bearer', 'Bearer {value}\r\nX-Evil: 1'])
      expect(SecretInjection.safeParse({ ...ok, format }).success).toBe(false);
  });

  it('is optional on a write: omitted keeps the binding, null removes it', () => {
    expect(PutStoredSecretRequest.parse({ value: 'v' }).inject).toBeUndefined();
    expect(PutStoredSecretRequest.parse({ value: 'v', inject: null }).inject).toBeNull();
  });
});
