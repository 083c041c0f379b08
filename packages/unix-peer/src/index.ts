export {
  bindUnixSocket,
  originalDestination,
  peerCredentials,
  type OriginalDestination,
  type PeerCredentials,
} from './native.js';
export {
  connectSandboxSocket,
  SandboxSocketRefused,
  type SandboxSocketOptions,
} from './connect-sandbox-socket.js';
