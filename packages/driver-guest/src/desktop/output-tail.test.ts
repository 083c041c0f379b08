import { describe, expect, it } from 'vitest';
import { OutputTail } from './output-tail.js';

describe('a sandbox output tail', () => {
  it('keeps the last bytes up to its cap and drops the rest', () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from('abcdef'));
    tail.push(Buffer.from('ghijkl'));
    expect(tail.text()).toBe('cdefghijkl');
    expect(tail.storedBytes).toBe(10);
    expect(tail.dropped).toBe(2);
    tail.push(Buffer.from('0123456789ABC'));
    expect(tail.text()).toBe('3456789ABC');
    expect(tail.dropped).toBe(15);
  });

  it('stays at the cap under a flood', () => {
    const tail = new OutputTail(64 * 1024);
    const line = Buffer.from(`${'x'.repeat(99)}\n`);
    for (let i = 0; i < 20_000; i += 1) tail.push(line);
    tail.push(Buffer.from('bwrap: the end\n'));
    expect(tail.storedBytes).toBe(64 * 1024);
    expect(tail.lastLines(1)).toBe('bwrap: the end');
  });

  it('says when nothing was written', () => {
    expect(new OutputTail().lastLines()).toBe('(no output)');
  });
});
