// Passwords for the private Redis: the default user (the API and the worker) and restricted ACL
// users (the dashboard: its own keys and a handful of commands, so it cannot queue jobs for the
// root worker). The config reaches redis-server on stdin, never on its command line (/proc shows
// that to everyone) nor in a file of its own.
import { createConnection } from 'node:net';

/** A Redis ACL user besides the default one. */
export interface RedisUser {
  /** ACL user name ([a-z0-9_-]). */
  name: string;
  /** Keys it may touch, as an ACL glob (e.g. `cubicle:web:*`). */
  keyPattern: string;
  /** Commands it may run besides logging in (AUTH, HELLO, PING, SELECT, CLIENT SETNAME/ID). */
  commands: string[];
}

const NAME = /^[a-z0-9_-]{1,32}$/;
const TOKEN = /^[A-Za-z0-9:_.*|-]+$/;

/** aclRule renders `user` as an ACL rule with its password (hex: no quoting needed). */
export function aclRule(user: RedisUser, password: string): string {
  if (
    !NAME.test(user.name) ||
    !TOKEN.test(user.keyPattern) ||
    !user.commands.every((c) => TOKEN.test(c))
  )
    throw new Error(`invalid Redis ACL user ${JSON.stringify(user.name)}`);
  const commands = user.commands.map((command) => `+${command}`).join(' ');
  // Not +@connection: that category holds CLIENT KILL, which would cut the worker's connections.
  const login = '+auth +hello +ping +echo +select +quit +client|setname +client|getname +client|id';
  return `${user.name} on >${password} resetkeys ~${user.keyPattern} resetchannels -@all ${login} ${commands}`;
}

/** redisConfig is what redis-server reads on stdin: the default user's password and the ACL users. */
export function redisConfig(
  password: string,
  users: Array<{ user: RedisUser; password: string }>,
): string {
  const lines = [`requirepass ${password}`];
  for (const { user, password: userPassword } of users)
    lines.push(`user ${aclRule(user, userPassword)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * sendCommands writes inline commands on one connection and resolves with the first line of each
 * answer ("+PONG", "-NOAUTH ...").
 */
export function sendCommands(socketPath: string, commands: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: socketPath });
    let reply = '';
    socket.setTimeout(1_000, () => socket.destroy(new Error('no answer within 1 s')));
    socket.once('connect', () => socket.write(commands.map((c) => `${c}\r\n`).join('')));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      const lines = replyLines(reply);
      if (lines.length >= commands.length) {
        socket.end();
        resolve(lines.slice(0, commands.length));
      }
    });
    socket.once('error', reject);
  });
}

/** replyLines keeps the first line of each complete answer (bulk strings: their header line). */
function replyLines(raw: string): string[] {
  const lines: string[] = [];
  const parts = raw.split('\r\n');
  parts.pop();
  for (let i = 0; i < parts.length; i += 1) {
    const line = parts[i] ?? '';
    lines.push(line);
    // A bulk string's payload follows on the next line; skip it.
    if (line.startsWith('$') && Number(line.slice(1)) >= 0) i += 1;
  }
  return lines;
}

/** pingWithPassword authenticates and pings; resolves with PING's answer line. */
export async function pingWithPassword(socketPath: string, password: string): Promise<string> {
  const [auth, pong] = await sendCommands(socketPath, [`AUTH ${password}`, 'PING']);
  if (auth?.startsWith('-LOADING')) return auth;
  if (auth !== '+OK') throw new Error(`AUTH answered ${auth?.split(' ')[0] ?? 'nothing'}`);
  return pong ?? '';
}

/**
 * requirePasswordLive migrates a running server of an older installation (no password): it sets
 * the default user's password and the ACL users on the fly. A server that already asks for a
 * password is left as it is.
 */
export async function requirePasswordLive(
  socketPath: string,
  password: string,
  users: Array<{ user: RedisUser; password: string }>,
): Promise<boolean> {
  const [pong] = await sendCommands(socketPath, ['PING']);
  if (pong !== '+PONG') return false;
  const commands = users.map(({ user, password: p }) => `ACL SETUSER ${aclRule(user, p)}`);
  commands.push(`CONFIG SET requirepass ${password}`);
  const answers = await sendCommands(socketPath, commands);
  const failed = answers.find((answer) => answer !== '+OK');
  if (failed) throw new Error(`could not set the Redis password on the running server: ${failed}`);
  return true;
}
