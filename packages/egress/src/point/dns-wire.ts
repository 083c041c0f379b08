/**
 * The little of the DNS wire format (RFC 1035) the egress resolver needs: read one question,
 * answer it with A records, an empty answer, or an error code. Names are compressed nowhere in
 * questions; answers point back at the question's name (offset 12).
 */

export const DNS_TYPE = { A: 1, CNAME: 5, AAAA: 28 } as const;
export const DNS_RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export interface DnsQuestion {
  id: number;
  /** Recursion desired, echoed in the answer. */
  rd: boolean;
  /** Lower case, without the trailing dot. */
  name: string;
  type: number;
  class: number;
  /** The question section as received (header excluded), echoed verbatim. */
  raw: Buffer;
}

/** parseQuery reads a query with exactly one question; null when it is not one. */
export function parseQuery(message: Buffer): DnsQuestion | null {
  if (message.length < 12) return null;
  const flags = message.readUInt16BE(2);
  const isQuery = (flags & 0x8000) === 0 && ((flags >> 11) & 0xf) === 0;
  if (!isQuery || message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return null; // compression has no place here
    offset += 1;
    if (length === 0) break;
    if (offset + length > message.length) return null;
    labels.push(message.toString('latin1', offset, offset + length));
    offset += length;
    if (offset - 12 > 255) return null;
  }
  if (offset + 4 > message.length) return null;
  return {
    id: message.readUInt16BE(0),
    rd: (flags & 0x0100) !== 0,
    name: labels.join('.').toLowerCase(),
    type: message.readUInt16BE(offset),
    class: message.readUInt16BE(offset + 2),
    raw: message.subarray(12, offset + 4),
  };
}

/**
 * buildAnswer answers `q` with `rcode` and, for NOERROR, one A record per address (an empty
 * list is NODATA: the name exists, without records of that type).
 */
export function buildAnswer(
  q: Pick<DnsQuestion, 'id' | 'rd' | 'raw'>,
  rcode: number,
  addresses: readonly string[] = [],
  ttlSeconds = 30,
): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.id, 0);
  // QR, recursion available, the client's RD, and the code.
  header.writeUInt16BE(0x8000 | 0x0080 | (q.rd ? 0x0100 : 0) | (rcode & 0xf), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(rcode === DNS_RCODE.NOERROR ? addresses.length : 0, 6);
  const records: Buffer[] = [];
  if (rcode === DNS_RCODE.NOERROR) {
    for (const address of addresses) {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0); // the question's name
      record.writeUInt16BE(DNS_TYPE.A, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(ttlSeconds, 6);
      record.writeUInt16BE(4, 10);
      address.split('.').forEach((part, i) => record.writeUInt8(Number(part), 12 + i));
      records.push(record);
    }
  }
  return Buffer.concat([header, q.raw, ...records]);
}

/** buildFormErr answers a message that could not be read as one question. */
export function buildFormErr(message: Buffer): Buffer | null {
  if (message.length < 12) return null;
  const header = Buffer.alloc(12);
  header.writeUInt16BE(message.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8000 | DNS_RCODE.FORMERR, 2);
  return header;
}
