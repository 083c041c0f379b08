import http from 'node:http';

export interface SseEvent {
  id: number | null;
  event: string;
  data: string;
}

/**
 * readSse opens a run's Server-Sent Events stream over real HTTP and hands each event to
 * `onEvent`; returning false from it disconnects (a client dropping mid-run). Resolves with
 * whether the server ended the stream itself (`event: end`).
 */
export function readSse(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  onEvent: (event: SseEvent) => boolean | void,
): Promise<{ ended: boolean; status: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, baseUrl), { headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve({ ended: false, status: res.statusCode ?? 0 });
      }
      res.setEncoding('utf8');
      let buffer = '';
      let finished = false;
      const finish = (ended: boolean) => {
        if (finished) return;
        finished = true;
        req.destroy();
        resolve({ ended, status: 200 });
      };
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (;;) {
          const end = buffer.indexOf('\n\n');
          if (end < 0 || finished) break;
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { id: null, event: 'message', data: '' };
          let isComment = true;
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) continue;
            isComment = false;
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') event.id = Number(value);
            else if (field === 'event') event.event = value;
            else if (field === 'data') event.data += value;
          }
          if (isComment) continue;
          if (event.event === 'end') return finish(true);
          if (onEvent(event) === false) return finish(false);
        }
      });
      res.on('end', () => finish(false));
      res.on('error', () => finish(false));
    });
    req.on('error', (err) => reject(err));
  });
}
