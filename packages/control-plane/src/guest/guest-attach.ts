/**
 * The API asks workers to serve a sandbox's guest queue on this channel (message: the sandbox
 * id): secrets added to a live claim and guest calls both need a worker attached to the guest.
 */
export const guestAttachChannel = (prefix: string) => `${prefix}:guest-attach`;
