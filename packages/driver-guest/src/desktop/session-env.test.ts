import { describe, expect, it } from 'vitest';
import { sessionEnv } from './session-env.js';
import { MARKER_VAR } from './session-processes.js';

describe('sessionEnv', () => {
  it('replaces the caller’s display and buses, turns a11y on and carries the marker', () => {
    const env = sessionEnv(
      { PATH: '/bin', DISPLAY: ':5', NO_AT_BRIDGE: '1', AT_SPI_BUS_ADDRESS: 'x', XAUTHORITY: '/a' },
      { id: 'desk_1', display: ':7', runtimeDir: '/tmp/r', busAddress: 'unix:path=/tmp/b' },
    );
    expect(env).toMatchObject({
      PATH: '/bin',
      DISPLAY: ':7',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/b',
      XDG_RUNTIME_DIR: '/tmp/r',
      GTK_MODULES: 'gail:atk-bridge',
      [MARKER_VAR]: 'desk_1',
    });
    expect(env).not.toHaveProperty('NO_AT_BRIDGE');
    expect(env).not.toHaveProperty('AT_SPI_BUS_ADDRESS');
    expect(env).not.toHaveProperty('XAUTHORITY');
  });
});
