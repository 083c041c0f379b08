/**
 * The line a viewer sends on a sandbox's VNC port before any RFB byte, proving it holds the
 * sandbox's guest token without sending it: `CUBICLE-VNC/1 <hex HMAC-SHA256>\n`, the HMAC keyed
 * with the SHA-256 of the guest token over VNC_PREAMBLE_CONTEXT. The guest answers nothing — not
 * even the RFB banner — until the line is right, and closes on a wrong one. The control plane's
 * viewer bridge sends it (packages/viewer/src/stream/vnc-preamble.ts); the guest's VNC relay
 * checks it (packages/driver-guest/src/vnc/viewer-preamble.ts). A change here is a new version
 * of the prefix, never an edit in place: sandboxes of older images keep running.
 */
export const VNC_PREAMBLE_PREFIX = 'CUBICLE-VNC/1 ';

/** What the HMAC covers: binds the credential to this one use (it opens no guest route). */
export const VNC_PREAMBLE_CONTEXT = 'cubicle vnc viewer preamble v1';

/** The preamble's exact length: prefix, 64 hex digits, newline. */
export const VNC_PREAMBLE_BYTES = VNC_PREAMBLE_PREFIX.length + 64 + 1;
