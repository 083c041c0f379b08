import { ClaimId } from '@cubicle/contract/api';

/**
 * claimOfToken reads the claim id a replay link's token names, unverified: it only builds the
 * API path. The API verifies the token on every request and answers 404 when its claim is not
 * the path's, so a forged id gains nothing; this saves an introspection per media range.
 */
export function claimOfToken(token: string): string | null {
  const payload = token.split('.')[1];
  if (!payload || token.length > 4096) return null;
  try {
    const clm = (
      JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { clm?: unknown }
    ).clm;
    return ClaimId.safeParse(clm).success ? (clm as string) : null;
  } catch {
    return null;
  }
}
