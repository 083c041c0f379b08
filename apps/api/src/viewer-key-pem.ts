import { createHash, createPrivateKey } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/g;

/**
 * viewerKeysFromPem turns PKCS#8 Ed25519 private keys (PEM, one or more; the first signs) into
 * the JWK set CUBICLE_VIEWER_KEYS expects. The Helm chart generates such a key once
 * (`genPrivateKey "ed25519"`): a template can make a PEM key but cannot derive its public part,
 * which the JWK set carries. Each kid is a hash of the public key, so every replica agrees on it.
 */
export function viewerKeysFromPem(pem: string): string {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error('CUBICLE_VIEWER_KEY_PEM holds no PKCS#8 private key');
  const keys = blocks.map((block) => {
    const key = createPrivateKey(block);
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`CUBICLE_VIEWER_KEY_PEM: an ${key.asymmetricKeyType} key (Ed25519 needed)`);
    const jwk = key.export({ format: 'jwk' });
    const kid = createHash('sha256').update(String(jwk.x)).digest('base64url').slice(0, 16);
    return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid };
  });
  return JSON.stringify({ keys });
}

/** withViewerKeysFromPem: the environment with CUBICLE_VIEWER_KEYS derived from CUBICLE_VIEWER_KEY_PEM when only that is set. */
export function withViewerKeysFromPem(
  source: Record<string, string | undefined>,
): Record<string, string | undefined> {
  if (source.CUBICLE_VIEWER_KEYS || !source.CUBICLE_VIEWER_KEY_PEM) return source;
  return { ...source, CUBICLE_VIEWER_KEYS: viewerKeysFromPem(source.CUBICLE_VIEWER_KEY_PEM) };
}
