import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodeList, ErrorCodes, ErrorEnvelope, statusForCode } from './index.js';

describe('error codes', () => {
  it('are snake_case and each maps to one 4xx/5xx status', () => {
    for (const code of ErrorCodeList) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const status = statusForCode(code);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
      expect(ErrorCodes[code].description.length).toBeGreaterThan(10);
    }
  });

  it('AppError carries its code and status', () => {
    const err = new AppError('quota_exceeded', 'pool quota reached', { limit: 3 });
    expect(err.status).toBe(429);
    expect(err.details).toEqual({ limit: 3 });
  });

  it('the envelope rejects unknown codes and unknown fields', () => {
    const ok = { error: { code: 'not_found', message: 'no such pool', request_id: 'req-1' } };
    expect(ErrorEnvelope.parse(ok)).toEqual(ok);
    expect(() => ErrorEnvelope.parse({ error: { ...ok.error, code: 'nope' } })).toThrow();
    expect(() => ErrorEnvelope.parse({ error: { ...ok.error, stack: 'x' } })).toThrow();
    expect(() => ErrorEnvelope.parse({ error: { code: 'not_found', message: 'x' } })).toThrow();
  });

  it('AppError round-trips through the envelope unchanged', () => {
    const err = new AppError('quota_exceeded', 'pool quota reached', { limit: 3, quota: 'pools' });
    const wire = JSON.parse(JSON.stringify(err.toEnvelope('req-7'))) as unknown;
    const envelope = ErrorEnvelope.parse(wire);
    expect(envelope.error.request_id).toBe('req-7');
    const back = AppError.fromEnvelope(envelope);
    expect([back.code, back.message, back.details, back.status]).toEqual([
      err.code,
      err.message,
      err.details,
      429,
    ]);
    expect(back.toEnvelope('req-7')).toEqual(envelope);
  });
});
