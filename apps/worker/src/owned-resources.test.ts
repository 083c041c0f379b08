import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OwnedResources } from './owned-resources.js';

describe('OwnedResources', () => {
  it('closes newest first, keeps going past a failing close, and closes once', async () => {
    const lines: { closed?: string; resource?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const owned = new OwnedResources(log);
    const order: string[] = [];
    const db = owned.own('postgres', { name: 'db' }, () => order.push('postgres'));
    expect(db).toEqual({ name: 'db' });
    owned.own('redis', 1, async () => {
      order.push('redis');
      throw new Error('already gone');
    });
    owned.own('workers', 2, async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('workers');
    });
    await Promise.all([owned.close(), owned.close()]);
    expect(order).toEqual(['workers', 'redis', 'postgres']);
    expect(lines.filter((l) => l.closed).map((l) => l.closed)).toEqual(['workers', 'postgres']);
    expect(lines.find((l) => l.resource)?.resource).toBe('redis');
    expect(() => owned.own('late', 3, () => undefined)).toThrow(/while closing/);
  });
});
