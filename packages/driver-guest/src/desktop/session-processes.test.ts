import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findSessionProcesses, isAlive, killSession, MARKER_VAR } from './session-processes.js';

describe('session processes', () => {
  it('finds processes by the whole marker entry, even outside our groups, and kills them', async () => {
    const id = `desk_unit_${process.pid}`;
    const mine = spawn('sleep', ['30'], {
      env: { [MARKER_VAR]: id },
      detached: true,
      stdio: 'ignore',
    });
    // A longer marker value that merely starts with ours must not match.
    const other = spawn('sleep', ['30'], {
      env: { [MARKER_VAR]: `${id}x` },
      detached: true,
      stdio: 'ignore',
    });
    try {
      await new Promise((r) => setTimeout(r, 50));
      expect(await findSessionProcesses(id, new Set())).toEqual([mine.pid]);
      expect(await killSession(id, new Set())).toEqual([mine.pid]);
      expect(await isAlive(mine.pid!)).toBe(false);
      expect(await isAlive(other.pid!)).toBe(true);
    } finally {
      process.kill(-other.pid!, 'SIGKILL');
      mine.kill('SIGKILL');
    }
  });
});
