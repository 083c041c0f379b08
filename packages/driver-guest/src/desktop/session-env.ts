import { MARKER_VAR } from './session-processes.js';

/** Variables of the caller's environment that would point apps at another desktop or bus. */
const FOREIGN = [
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'DBUS_SESSION_BUS_ADDRESS',
  'AT_SPI_BUS_ADDRESS',
  'NO_AT_BRIDGE',
  'SESSION_MANAGER',
  'XDG_SESSION_TYPE',
];

/**
 * sessionEnv is the environment of every process of one desktop. Besides DISPLAY and the bus,
 * it turns accessibility on for each toolkit (GTK3 loads atk-bridge by default unless
 * NO_AT_BRIDGE; Qt and Chromium need to be asked), keeps GSettings in memory (no dconf
 * daemon to leak), and carries the session marker by which stop() finds escaped processes.
 */
export function sessionEnv(
  base: Record<string, string | undefined>,
  session: {
    id: string;
    display: string;
    runtimeDir: string;
    busAddress?: string;
    a11yAddress?: string;
    /** Carry the session marker (default true); a sandbox's processes carry nothing of Cubicle's. */
    mark?: boolean;
  },
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...base };
  for (const name of FOREIGN) delete env[name];
  return {
    ...env,
    DISPLAY: session.display,
    XDG_RUNTIME_DIR: session.runtimeDir,
    ...(session.busAddress ? { DBUS_SESSION_BUS_ADDRESS: session.busAddress } : {}),
    ...(session.a11yAddress ? { AT_SPI_BUS_ADDRESS: session.a11yAddress } : {}),
    GTK_MODULES: 'gail:atk-bridge',
    ACCESSIBILITY_ENABLED: '1',
    QT_ACCESSIBILITY: '1',
    QT_LINUX_ACCESSIBILITY_ALWAYS_ON: '1',
    GSETTINGS_BACKEND: 'memory',
    ...(session.mark === false ? {} : { [MARKER_VAR]: session.id }),
  };
}
