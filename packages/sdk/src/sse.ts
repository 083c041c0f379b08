/** SseMessage is one Server-Sent Event (comments and keep-alives are skipped). */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * parseSse reads an event stream as the HTML spec frames it: lines ending in LF, CRLF or CR,
 * `field: value`, a blank line ending each event. It ends when the body ends; a dropped
 * connection surfaces as the reader's error.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0 || event)
            yield { id, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? '' : line.slice(colon + 1);
        const text = raw.startsWith(' ') ? raw.slice(1) : raw;
        if (field === 'id') id = text;
        else if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
