import type { FastifyServerOptions } from 'fastify';
import type { GuestTokenDigest } from './auth.js';

/**
 * GuestDeps is everything the guest routes need from the process that hosts them: the token,
 * the desktop they drive, and the environment for processes they spawn. The daemon's main.ts
 * builds it from env.ts; the desktop launcher builds it directly when it hosts the daemon
 * in-process. Capability folders read what they need from here, never from `process.env`.
 */
export interface GuestDeps {
  /**
   * Bearer token every route but /healthz requires (at least 32 characters), or only its
   * SHA-256 (a sandboxed daemon never holds the token itself).
   */
  token: string | GuestTokenDigest;
  /** X display name of the desktop, e.g. `:1`. */
  display: string;
  /** Address of the desktop's session D-Bus (the AT-SPI bus is found through it). */
  sessionBusAddress?: string | undefined;
  /**
   * Environment for processes the driver starts (shell runs, launched apps): DISPLAY, the
   * session bus and the accessibility settings, so what runs lands in this desktop.
   */
  childEnv: Record<string, string | undefined>;
  /** Largest file a files call may read or write, in bytes. */
  maxFileBytes: number;
  /** Port of the supervised x11vnc on localhost, or null while it is not running. */
  vncPort: () => number | null | Promise<number | null>;
  logger?: FastifyServerOptions['logger'];
}
