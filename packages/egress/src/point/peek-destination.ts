/**
 * peekDestination reads the name a connection's first bytes carry: the SNI of a TLS ClientHello
 * or the Host of an HTTP/1 request. It says `more` while the bytes so far could still become one
 * and are under the cap, so the caller waits for the next segment (a post-quantum ClientHello
 * spans two segments on a 1,500-byte link).
 */

/** How much the egress point buffers before giving up on finding a name. */
export const PEEK_MAX_BYTES = 16 * 1024;

export type Peeked =
  | { kind: 'tls'; name: string | null }
  | { kind: 'http'; name: string | null }
  | { kind: 'other' }
  | { kind: 'more' };

const HTTP_METHOD = /^(GET|POST|PUT|HEAD|DELETE|OPTIONS|PATCH|CONNECT|TRACE|PRI) /;

export function peekDestination(data: Buffer): Peeked {
  if (data.length === 0) return { kind: 'more' };
  if (data[0] === 0x16) return peekTls(data);
  const text = data.toString('latin1', 0, Math.min(data.length, PEEK_MAX_BYTES));
  if (!HTTP_METHOD.test(text))
    return /^[A-Z]{1,7}$/.test(text) && data.length < 8 ? { kind: 'more' } : { kind: 'other' };
  const end = text.indexOf('\r\n\r\n');
  if (end < 0)
    return data.length >= PEEK_MAX_BYTES ? { kind: 'http', name: null } : { kind: 'more' };
  const host = /\r\nhost:[ \t]*([^\r\n]*)/i.exec(text.slice(0, end + 2))?.[1]?.trim() ?? '';
  return { kind: 'http', name: hostName(host) };
}

/** hostName strips the port of a Host header; null for an IP literal or nothing. */
function hostName(host: string): string | null {
  if (!host || host.startsWith('[')) return null;
  const name = host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
  return /^[a-z0-9.-]+$/.test(name) && /[a-z]/.test(name.split('.').at(-1) ?? '') ? name : null;
}

function peekTls(data: Buffer): Peeked {
  if (data.length < 5) return { kind: 'more' };
  if (data[1] !== 3) return { kind: 'other' };
  const recordLength = data.readUInt16BE(3);
  // The ClientHello may also span records; reading the first record's worth is enough for SNI
  // in practice, and a hello that does not fit is judged without a name.
  if (data.length < 5 + Math.min(recordLength, 4)) return { kind: 'more' };
  if (data[5] !== 1) return { kind: 'other' };
  if (data.length < 5 + recordLength) {
    return data.length >= PEEK_MAX_BYTES ? { kind: 'tls', name: null } : { kind: 'more' };
  }
  return { kind: 'tls', name: sniOf(data.subarray(5, 5 + recordLength)) };
}

/** sniOf reads server_name (extension 0, host_name type 0) of a ClientHello handshake message. */
function sniOf(hello: Buffer): string | null {
  try {
    let at = 4 + 2 + 32; // handshake header, client version, random
    at += 1 + hello.readUInt8(at); // session id
    at += 2 + hello.readUInt16BE(at); // cipher suites
    at += 1 + hello.readUInt8(at); // compression methods
    const end = Math.min(hello.length, at + 2 + hello.readUInt16BE(at));
    at += 2;
    while (at + 4 <= end) {
      const type = hello.readUInt16BE(at);
      const length = hello.readUInt16BE(at + 2);
      at += 4;
      if (type === 0) {
        let item = at + 2;
        while (item + 3 <= at + length) {
          const nameLength = hello.readUInt16BE(item + 1);
          if (hello[item] === 0)
            return hostName(hello.toString('latin1', item + 3, item + 3 + nameLength));
          item += 3 + nameLength;
        }
        return null;
      }
      at += length;
    }
  } catch {
    /* a malformed hello: judged without a name */
  }
  return null;
}
