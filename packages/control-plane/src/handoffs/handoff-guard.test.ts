import { AppError } from '@cubicle/contract/errors';
import { GuestRoutes } from '@cubicle/contract/guest';
import { describe, expect, it } from 'vitest';
import { isDrivingOperation, refuseDuringHandoff } from './handoff-guard.js';

describe('driving calls during a handoff', () => {
  it('refuses the operations that change the desktop, with the handoff id', () => {
    for (const op of ['act.element', 'act.pixel', 'shell.run', 'files.write', 'files.delete'])
      expect(isDrivingOperation(op), op).toBe(true);
    for (const op of ['windows.launch', 'windows.close'])
      expect(isDrivingOperation(op), op).toBe(true);
    try {
      refuseDuringHandoff('hof_x', 'act.element');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('handoff_active');
      expect((error as AppError).details).toEqual({ handoff_id: 'hof_x' });
    }
  });

  it('lets reads through, and everything when no handoff is active', () => {
    for (const op of ['observe', 'verify_state', 'screenshot', 'files.read', 'files.list'])
      expect(() => refuseDuringHandoff('hof_x', op), op).not.toThrow();
    for (const op of Object.keys(GuestRoutes))
      expect(() => refuseDuringHandoff(null, op), op).not.toThrow();
  });
});
