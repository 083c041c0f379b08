// The guest driver daemon (observe / act / verify, shell, files, windows) is built in the
// guest-driver issue; this package already owns its configuration contract.
export { GuestEnv, loadGuestEnv } from './env.js';
