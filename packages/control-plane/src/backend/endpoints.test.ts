import { describe, expect, it } from 'vitest';
import { guestSocketPath, guestUnixUrl, parseVncEndpoint, vncUnixEndpoint } from './endpoints.js';

describe('sandbox endpoints', () => {
  it('round-trips a guest socket path through an http+unix URL', () => {
    const url = guestUnixUrl('/tmp/cubicle-desktop-a_b/sock/guest.sock');
    expect(url).toBe('http+unix://%2Ftmp%2Fcubicle-desktop-a_b%2Fsock%2Fguest.sock');
    const request = new URL('/v1/shell?x=1', url);
    expect(guestSocketPath(request)).toBe('/tmp/cubicle-desktop-a_b/sock/guest.sock');
    expect(request.pathname + request.search).toBe('/v1/shell?x=1');
    expect(guestSocketPath(new URL('http://10.0.0.7:8080/healthz'))).toBeNull();
    expect(() => guestUnixUrl('relative.sock')).toThrow(/absolute/);
  });

  it('reads unix and TCP VNC endpoints, and nothing else', () => {
    expect(parseVncEndpoint(vncUnixEndpoint('/tmp/s/vnc.sock'))).toEqual({
      path: '/tmp/s/vnc.sock',
    });
    expect(parseVncEndpoint('127.0.0.1:5901')).toEqual({ host: '127.0.0.1', port: 5901 });
    expect(parseVncEndpoint('[fd00::1]:5900')).toEqual({ host: 'fd00::1', port: 5900 });
    for (const bad of ['unix:relative', 'unix:', 'host', 'host:0', 'host:70000', ':5900'])
      expect(parseVncEndpoint(bad), bad).toBeNull();
  });
});
