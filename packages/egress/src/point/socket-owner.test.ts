import { describe, expect, it } from 'vitest';
import { parseProcNet } from './socket-owner.js';

// Two lines as the kernel writes /proc/<pid>/net/tcp: a listener and a connection from
// 10.217.0.2:40000 (0200D90A:9C40) to 198.51.100.20:7, socket inode 123456.
const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 991 1 0000000000000000 100 0 0 10 0
   1: 0200D90A:9C40 146433C6:0007 01 00000000:00000000 00:00000000 00000000 100000        0 123456 1 0000000000000000 20 4 30 10 -1
`;

describe('parseProcNet', () => {
  it('finds the socket inode of a local IPv4 address and port', () => {
    expect(parseProcNet(TABLE, '10.217.0.2', 40000)).toBe(123456);
    expect(parseProcNet(TABLE, '127.0.0.1', 8080)).toBe(991);
  });
  it('answers null for an address no socket has, or a malformed one', () => {
    expect(parseProcNet(TABLE, '10.217.0.2', 40001)).toBeNull();
    expect(parseProcNet(TABLE, 'not-an-ip', 1)).toBeNull();
  });
});
