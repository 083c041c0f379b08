// The control plane's folders are floors: a module imports its own floor and the ones below it,
// never one above (static, type-only, re-exported or dynamic import() alike). A back-import ties
// two systems into one that can be neither read nor moved alone, and ESM hands one side of a
// circle an undefined binding at start-up. The test reads the sources and names every offender.
import { dirname, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineOf, readSource, sourcesUnder } from '../test/support/repo-sources.js';

const SRC = 'packages/control-plane/src';

/**
 * The floors, lowest first. Root files other than index.ts (resources.ts: the Resources and the
 * narrow views every service takes; context.ts: the connection shapes and nudges; page-by-id.ts)
 * form the floor named '.'. index.ts is the package's face above them all.
 * Why this order: crypto and the backend contract need nothing; the Resources (with the pub/sub
 * connections) name them, and each floor above brings its own devices (defineDevice); the
 * repositories (one module per table family: its statements and row mappers) need only the
 * database, so every system may read and write through them; viewer revocations, idempotency and
 * the webhook outbox are recorded by the systems above; egress (policies, the egress point's
 * reports) reads pools and claims through the repositories and announces through the outbox;
 * the lifecycle owns claim and sandbox
 * states and their rows; the guest door reads the lifecycle's liveness; recordings pull video from
 * the guest door and are set up by pools, claims and sandboxes above; claims use the lifecycle;
 * sandboxes hand themselves to pending claims; secrets ride on claims and the guest door; handoffs hold claims' deadlines
 * and revoke viewer tickets; guest calls redact with secrets and refuse driving during a handoff; runs use all of those; the worker's loops (reconcile, reclaim) drive
 * claims and sandboxes from the top.
 */
const FLOORS = [
  'crypto',
  'backend',
  // The object store's control-plane side: tenant data keys wrapped by the keyring (crypto); the
  // Resources ('.') carry it.
  'objects',
  '.',
  'repositories',
  'viewer',
  'idempotency',
  'webhooks',
  'egress',
  'lifecycle',
  'guest',
  'recordings',
  'pools',
  'usage',
  'claims',
  'sandboxes',
  'secrets',
  'handoffs',
  'guest-calls',
  // Pause freezes a claim's desktop through the lane guest calls use; runs resume it at start.
  'pause',
  'runs',
  // The timeline reads every system's rows of a claim and redacts with its secrets.
  'timeline',
  // Profiles take claims (with secrets), restore and save through the guest, and save before a
  // released desktop is destroyed (sandboxes).
  'profiles',
  // Snapshots pack a claim's home through its guest with the profiles' chunk transfer; forks take
  // claims (with secrets) and restore.
  'snapshots',
  'reconcile',
  'reclaim',
] as const;

/** The relative modules a source names: static, type-only, re-exports and dynamic import(). */
const SPECIFIER = /(?:\bfrom|\bimport\(?)\s*['"](\.{1,2}\/[^'"]+)['"]/g;

const specifiers = (text: string) =>
  [...text.matchAll(SPECIFIER)].map((m) => ({ spec: m[1]!, index: m.index }));

/** folderOf is a module's folder under src ('.' for a root file). */
const folderOf = (path: string) => {
  const inSrc = posix.relative(SRC, path);
  return inSrc.includes('/') ? inSrc.split('/')[0]! : '.';
};

interface Import {
  file: string;
  line: number;
  spec: string;
  from: string;
  to: string;
}

function importsBetweenFolders(): Import[] {
  const out: Import[] = [];
  for (const file of sourcesUnder(SRC)) {
    if (file === `${SRC}/index.ts`) continue; // the face names every floor
    const text = readSource(file);
    for (const { spec, index } of specifiers(text)) {
      const to = folderOf(posix.join(dirname(file), spec));
      const from = folderOf(file);
      if (to !== from) out.push({ file, line: lineOf(text, index), spec, from, to });
    }
  }
  return out;
}

const floorOf = (folder: string) => (FLOORS as readonly string[]).indexOf(folder);

describe('control-plane folder order', () => {
  const imports = importsBetweenFolders();

  it('reads static, type-only, re-exported and dynamic imports', () => {
    const sample = [
      "import { a } from '../claims/a.js';",
      "import type { B } from '../runs/b.js';",
      "export { c } from './c.js';",
      "const d = await import('../guest/d.js');",
      "import '../webhooks/e.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(specifiers(sample).map((s) => s.spec)).toEqual([
      '../claims/a.js',
      '../runs/b.js',
      './c.js',
      '../guest/d.js',
      '../webhooks/e.js',
    ]);
  });

  it('reads the imports between folders of the package', () => {
    expect(imports.length).toBeGreaterThan(50);
    expect(imports).toContainEqual(
      expect.objectContaining({ file: `${SRC}/claims/create-claim.ts`, to: 'lifecycle' }),
    );
  });

  it('gives every folder a floor', () => {
    const folders = new Set(sourcesUnder(SRC).map(folderOf));
    expect([...folders].filter((f) => floorOf(f) < 0)).toEqual([]);
  });

  it('has no import from a lower floor up to a higher one', () => {
    const upward = imports
      .filter((i) => floorOf(i.to) > floorOf(i.from))
      .map((i) => `${i.file}:${i.line} imports '${i.spec}' (${i.from} may not import ${i.to})`);
    expect(upward).toEqual([]);
  });
});
