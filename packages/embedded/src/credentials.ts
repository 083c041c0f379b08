// Per-installation passwords of the private servers: generated once, kept in a 0600 file that
// only the clients' side reads (the servers get a hash or a config on stdin, never a file of it).
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

export interface Password {
  /** 64 hex digits: safe in a URL and in a config line without quoting. */
  value: string;
  /** True when the file was made just now (the server does not know this password yet). */
  isNew: boolean;
}

const PASSWORD = /^[0-9a-f]{64}$/;

/**
 * ensurePasswordFile returns the password kept in `file`, making one (32 random bytes, hex, mode
 * 0600) when the file does not exist. A file readable by others is tightened back to 0600.
 */
export function ensurePasswordFile(file: string): Password {
  if (!existsSync(file)) {
    const value = randomBytes(32).toString('hex');
    // 'wx': two starters racing on one installation never overwrite each other's password.
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, isNew: true };
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const value = readFileSync(file, 'utf8').trim();
  if (!PASSWORD.test(value)) {
    throw new Error(
      `${file} does not hold a password of 64 hex digits; remove it to make a new one`,
    );
  }
  return { value, isNew: false };
}

/**
 * scramVerifier is the SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802/7677,
 * the format of pg_authid.rolpassword). Giving the server this instead of the password keeps the
 * plaintext out of its logs and catalogs. Our passwords are ASCII, so SASLprep changes nothing.
 */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  const b64 = (buffer: Buffer) => buffer.toString('base64');
  return `SCRAM-SHA-256$${iterations}:${b64(salt)}$${b64(storedKey)}:${b64(serverKey)}`;
}
