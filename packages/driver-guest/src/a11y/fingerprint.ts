/**
 * Fingerprint is the identity evidence a token carries besides its object reference: the
 * element's role and name, and its ancestors' roles and names up to the window. Values, states
 * and positions are left out on purpose: they change when the app works normally.
 */
export interface Fingerprint {
  role: string;
  name: string;
  ancestors: { role: string; name: string }[];
}

interface Named {
  role: string;
  name: string;
}

/** fingerprintOf builds a fingerprint from an element and its ancestors (nearest first). */
export function fingerprintOf(node: Named, ancestors: readonly Named[]): Fingerprint {
  return {
    role: node.role,
    name: node.name,
    ancestors: ancestors.map((a) => ({ role: a.role, name: a.name })),
  };
}

/** sameFingerprint compares two fingerprints exactly; a rename anywhere up the chain breaks it. */
export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  if (a.role !== b.role || a.name !== b.name || a.ancestors.length !== b.ancestors.length)
    return false;
  return a.ancestors.every(
    (x, i) => x.role === b.ancestors[i]?.role && x.name === b.ancestors[i]?.name,
  );
}

/** describeMismatch says what changed, for the refusal hint. */
export function describeMismatch(issued: Fingerprint, live: Fingerprint): string {
  if (issued.role !== live.role) return `its role changed from ${issued.role} to ${live.role}`;
  if (issued.name !== live.name)
    return `its name changed from ${JSON.stringify(issued.name)} to ${JSON.stringify(live.name)}`;
  return 'an ancestor was renamed, re-roled or moved';
}
