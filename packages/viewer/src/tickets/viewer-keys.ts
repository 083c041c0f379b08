import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { ViewerTicketClaims } from '@cubicle/contract/api';
import { compactVerify, SignJWT } from 'jose';
import { z } from 'zod';

const ALG = 'EdDSA';
/** The JOSE `typ` of a viewer ticket, so no other token signed by these keys passes as one. */
const TYP = 'cubicle-viewer+jwt';

const OkpJwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().min(1),
  d: z.string().min(1).optional(),
  kid: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'kid: 1–64 of A-Z a-z 0-9 . _ -'),
});
const KeySet = z.object({ keys: z.array(OkpJwk).min(1).max(16) });

/**
 * ViewerKeys sign and verify viewer tickets (Ed25519, JWS compact). The first key of the set
 * signs and must hold its private part; every key verifies, so rotation is: put a new key first,
 * keep the old one (public part is enough) until the longest ticket it signed has expired.
 */
export interface ViewerKeys {
  /** The kid that signs new tickets. */
  signingKid: string;
  sign(claims: ViewerTicketClaims): Promise<string>;
  /**
   * verify checks the signature (any key of the set, by kid) and the claims' shape. It does
   * not check `exp`: an expired ticket is still *this* ticket, and callers report its state.
   * Returns null for anything that is not a well-formed ticket signed by one of the keys.
   */
  verify(ticket: string): Promise<ViewerTicketClaims | null>;
  /**
   * signAs and verifyAs do the same for another kind of token signed by these keys (MCP tokens),
   * told apart by its JOSE `typ`: a token of one kind never verifies as another. verifyAs answers
   * the payload unparsed (the caller owns its schema), or null.
   */
  signAs(typ: string, payload: Record<string, unknown>): Promise<string>;
  verifyAs(typ: string, token: string): Promise<unknown>;
}

/**
 * parseViewerKeys reads a JWK set (JSON `{"keys":[{kty:"OKP",crv:"Ed25519",x,d,kid}]}`); it
 * throws with a message naming what is wrong, which env.ts turns into a start-up error.
 */
export function parseViewerKeys(json: string): ViewerKeys {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('not JSON (expected a JWK set {"keys":[…]})');
  }
  const set = KeySet.parse(raw);
  const kids = new Set(set.keys.map((k) => k.kid));
  if (kids.size !== set.keys.length) throw new Error('key ids (kid) must be unique');
  const first = set.keys[0]!;
  if (!first.d) throw new Error(`the first key (${first.kid}) signs and needs its private part d`);
  const signing = createPrivateKey({ key: { ...first }, format: 'jwk' });
  const verifying = new Map<string, KeyObject>(
    set.keys.map((k) => [
      k.kid,
      createPublicKey({ key: { kty: k.kty, crv: k.crv, x: k.x }, format: 'jwk' }),
    ]),
  );
  const signAs = (typ: string, payload: Record<string, unknown>) =>
    new SignJWT({ ...payload }).setProtectedHeader({ alg: ALG, typ, kid: first.kid }).sign(signing);
  const verifyAs = async (typ: string, token: string): Promise<unknown> => {
    try {
      const { payload, protectedHeader } = await compactVerify(
        token,
        (header) => {
          const key = header.kid ? verifying.get(header.kid) : undefined;
          if (!key) throw new Error('unknown kid');
          return key;
        },
        { algorithms: [ALG] },
      );
      if (protectedHeader.typ !== typ) return null;
      return JSON.parse(Buffer.from(payload).toString('utf8')) as unknown;
    } catch {
      return null;
    }
  };
  return {
    signingKid: first.kid,
    sign: (claims) => signAs(TYP, claims),
    async verify(ticket) {
      const claims = ViewerTicketClaims.safeParse(await verifyAs(TYP, ticket));
      return claims.success ? claims.data : null;
    },
    signAs,
    verifyAs,
  };
}

/** generateViewerKeySet makes a fresh one-key set (first run of `npm start`, tests). */
export function generateViewerKeySet(kid = `v${Date.now().toString(36)}`): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return JSON.stringify({ keys: [{ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid }] });
}
