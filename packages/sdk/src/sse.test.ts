import { describe, expect, it } from 'vitest';
import { parseSse } from './sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe('parseSse', () => {
  it('frames events split anywhere across chunks, skipping comments', async () => {
    const text =
      ': keepalive\n\nid: 1\nevent: stdout\ndata: {"a":1}\n\nid: 2\r\nevent: exit\r\ndata: x\r\ndata: y\r\n\r\nevent: end\ndata: {}\n\n';
    const chunks = text.match(/.{1,3}/gs)!;
    const out = [];
    for await (const m of parseSse(streamOf(chunks))) out.push(m);
    expect(out).toEqual([
      { id: '1', event: 'stdout', data: '{"a":1}' },
      { id: '2', event: 'exit', data: 'x\ny' },
      { id: '2', event: 'end', data: '{}' },
    ]);
  });

  it('drops an event the stream cut before its blank line', async () => {
    const out = [];
    for await (const m of parseSse(streamOf(['id: 1\ndata: a\n\nid: 2\ndata: b']))) out.push(m);
    expect(out.map((m) => m.id)).toEqual(['1']);
  });
});
