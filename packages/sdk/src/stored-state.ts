import type { ItemOf, QueryOf } from './operations.js';
import type { CallOptions, Transport } from './transport.js';

/** Profiles: per-end-user desktop state, attached to a claim with `claims.create(pool, {profile})`. */
export class Profiles {
  constructor(readonly t: Transport) {}

  list(
    query?: QueryOf<'listProfiles'>,
    options?: CallOptions,
  ): AsyncGenerator<ItemOf<'listProfiles'>> {
    return this.t.paginate('listProfiles', { query }, options);
  }
  get(id: string, options?: CallOptions) {
    return this.t.call('getProfile', { params: { id } }, options);
  }
  /** delete removes the profile and its stored objects (409 while a live claim holds it). */
  delete(id: string, options?: CallOptions) {
    return this.t.call('deleteProfile', { params: { id } }, options);
  }
}

/** Snapshots: stored copies of a claim's home, taken with `claim.snapshot()`, forked with `claims.fork`. */
export class Snapshots {
  constructor(readonly t: Transport) {}

  list(
    query?: QueryOf<'listSnapshots'>,
    options?: CallOptions,
  ): AsyncGenerator<ItemOf<'listSnapshots'>> {
    return this.t.paginate('listSnapshots', { query }, options);
  }
  get(id: string, options?: CallOptions) {
    return this.t.call('getSnapshot', { params: { id } }, options);
  }
  delete(id: string, options?: CallOptions) {
    return this.t.call('deleteSnapshot', { params: { id } }, options);
  }
}

/** ReplayLinks: the one call a replay link's holder makes without an API key. */
export class ReplayLinks {
  constructor(readonly t: Transport) {}

  /** introspect needs no API key: the link's token is the credential. */
  introspect(token: string, options?: CallOptions) {
    return this.t.call('introspectReplayLink', { body: { token } }, options);
  }
}
