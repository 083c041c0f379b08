import { describe, expect, it } from 'vitest';
import { embedHtml } from '../tickets/embed-html.js';
import { parseEndpoint } from './rfb-bridge.js';

describe('parseEndpoint', () => {
  it('reads host:port and [v6]:port, and nothing else', () => {
    expect(parseEndpoint('127.0.0.1:5901')).toEqual({ host: '127.0.0.1', port: 5901 });
    expect(parseEndpoint('sbx-1.pods.svc:5900')).toEqual({ host: 'sbx-1.pods.svc', port: 5900 });
    expect(parseEndpoint('[fd00::1]:5900')).toEqual({ host: 'fd00::1', port: 5900 });
    for (const bad of ['127.0.0.1', ':5900', 'h:0', 'h:65536', 'fd00::1:5900', 'h:59a'])
      expect(parseEndpoint(bad), bad).toBeNull();
  });
});

describe('embedHtml', () => {
  it('is one sandboxed iframe of the viewer URL, escaped', () => {
    const html = embedHtml('https://w.test/embed/a.b.c?x="><script>', 'view');
    expect(html).toMatch(/^<iframe [^<]*><\/iframe>$/);
    expect(html).toContain('src="https://w.test/embed/a.b.c?x=&quot;&gt;&lt;script&gt;"');
    expect(html).toContain('sandbox="allow-scripts allow-same-origin"');
    expect(html).toContain('title="Live desktop (view only)"');
  });
});
