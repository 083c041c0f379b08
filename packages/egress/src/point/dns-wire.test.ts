import { describe, expect, it } from 'vitest';
import { buildAnswer, DNS_RCODE, DNS_TYPE, parseQuery } from './dns-wire.js';

/** A query as dig sends it: id 0x1234, RD, one question. */
function query(name: string, type: number): Buffer {
  const labels = name
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const tail = Buffer.alloc(5);
  tail.writeUInt16BE(type, 1);
  tail.writeUInt16BE(1, 3);
  return Buffer.concat([
    Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels,
    tail,
  ]);
}

describe('dns-wire', () => {
  it('reads one question, lower-cased', () => {
    expect(parseQuery(query('API.Example.test', DNS_TYPE.A))).toMatchObject({
      id: 0x1234,
      rd: true,
      name: 'api.example.test',
      type: DNS_TYPE.A,
      class: 1,
    });
  });

  it('refuses answers, several questions and truncated names', () => {
    const answer = query('a.test', 1);
    answer[2] = 0x81;
    expect(parseQuery(answer)).toBeNull();
    const two = query('a.test', 1);
    two[5] = 2;
    expect(parseQuery(two)).toBeNull();
    expect(parseQuery(query('a.test', 1).subarray(0, 16))).toBeNull();
  });

  it('answers A records pointing at the question, and NXDOMAIN without records', () => {
    const q = parseQuery(query('a.test', DNS_TYPE.A))!;
    const ok = buildAnswer(q, DNS_RCODE.NOERROR, ['198.51.100.7', '203.0.113.9'], 60);
    expect(ok.readUInt16BE(0)).toBe(0x1234);
    expect(ok.readUInt16BE(2) & 0x800f).toBe(0x8000);
    expect(ok.readUInt16BE(6)).toBe(2);
    const first = 12 + q.raw.length;
    expect(ok.readUInt16BE(first)).toBe(0xc00c);
    expect(ok.readUInt32BE(first + 6)).toBe(60);
    expect([...ok.subarray(first + 12, first + 16)]).toEqual([198, 51, 100, 7]);
    const nx = buildAnswer(q, DNS_RCODE.NXDOMAIN, ['198.51.100.7']);
    expect(nx.readUInt16BE(2) & 0xf).toBe(DNS_RCODE.NXDOMAIN);
    expect(nx.readUInt16BE(6)).toBe(0);
  });
});
