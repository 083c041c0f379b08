import { ShellStreamServerMessage } from '@cubicle/contract/guest';
import { describe, expect, it } from 'vitest';
import { parseShellMessage } from './shell-message.js';

describe('parseShellMessage', () => {
  it('accepts exactly what the ShellStreamServerMessage schema accepts', () => {
    const chunk = { type: 'stdout', seq: 3, data: '3\n', encoding: 'utf8' };
    const variants: unknown[] = [
      chunk,
      { ...chunk, type: 'stderr', encoding: 'base64' },
      { ...chunk, seq: 0 },
      { ...chunk, seq: -1 },
      { ...chunk, seq: 1.5 },
      { ...chunk, seq: '3' },
      { ...chunk, data: 3 },
      { ...chunk, encoding: 'latin1' },
      { ...chunk, extra: true },
      { type: 'stdout', seq: 3, data: '3\n' },
      { type: 'started', run_id: 'run_1', pid: 42 },
      { type: 'started', pid: 42 },
      { type: 'nope' },
      [chunk],
      null,
      '3\n',
    ];
    for (const variant of variants) {
      const text = JSON.stringify(variant);
      const bySchema = ShellStreamServerMessage.safeParse(variant);
      expect({ text, parsed: parseShellMessage(text) }).toEqual({
        text,
        parsed: bySchema.success ? bySchema.data : null,
      });
    }
    expect(parseShellMessage('{"type":"stdout"')).toBeNull();
  });
});
