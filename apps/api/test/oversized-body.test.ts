// A body over the limit is answered 413 while the client may still be sending it. The answer must
// reach a real client over a real socket every time: a server that closes the connection with the
// rest of the body unread makes the kernel reset it, and the client sees EPIPE instead of the 413
// (the fuzzer saw that in 2 of 8 tries). `inject` cannot show this; a client in a worker can.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_WAYS, uploadOverLimit } from '../../../test/harness/upload-over-limit.js';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

const TRIES = 8;

describe('a body over the limit is a 413 on the wire, every time', () => {
  let fx: FullAppFixture;
  let base: string;
  beforeAll(async () => {
    fx = await fullAppFixture();
    base = await fx.app.listen({ host: '127.0.0.1', port: 0 });
    await fx.pool('big-bodies');
  });
  afterAll(async () => fx?.close());

  it.each(UPLOAD_WAYS)('%s: 8 tries of 10 MB against a 1 MiB limit', async (_name, how) => {
    const outcomes = await uploadOverLimit({
      url: `${base}/v1/pools/big-bodies/claims`,
      headers: { authorization: fx.a.admin },
      bytes: 10 * 1024 * 1024,
      tries: TRIES,
      ...how,
    });
    expect(outcomes).toEqual(
      Array.from({ length: TRIES }, () => ({ status: 413, code: 'payload_too_large' })),
    );
  });

  it('the server answers the next request as usual', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
  });
});
