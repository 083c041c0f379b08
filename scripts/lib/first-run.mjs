// What `npm start` sets up once per checkout: the keyring that seals secrets at rest, the keys
// that sign viewer tickets, and the
// default tenant with an admin key and a pool `default` of 2 warm desktops. The key is kept in
// .cubicle/admin-key (mode 600) so every start can print it; the database stores only its hash.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** ensureKeyring returns CUBICLE_KEYRING from the environment or .cubicle/keyring (made on first run). */
export function ensureKeyring(ctx) {
  if (ctx.env.CUBICLE_KEYRING) return;
  const file = join(ctx.dataRoot, 'keyring');
  if (!existsSync(file)) {
    writeFileSync(file, `k1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    ctx.log(`created ${file}`);
  }
  ctx.env.CUBICLE_KEYRING = readFileSync(file, 'utf8').trim();
}

/**
 * ensureViewerKeys returns CUBICLE_VIEWER_KEYS from the environment or .cubicle/viewer-keys.json
 * (an Ed25519 JWK set made on first run), so viewer tickets survive restarts of `npm start`.
 */
export async function ensureViewerKeys(ctx) {
  if (ctx.env.CUBICLE_VIEWER_KEYS) return;
  const file = join(ctx.dataRoot, 'viewer-keys.json');
  if (!existsSync(file)) {
    const { generateViewerKeySet } = await import(
      pathToFileURL(join(ctx.root, 'packages/viewer/dist/index.js')).href
    );
    writeFileSync(file, `${generateViewerKeySet('v1')}\n`, { mode: 0o600 });
    ctx.log(`created ${file}`);
  }
  ctx.env.CUBICLE_VIEWER_KEYS = readFileSync(file, 'utf8').trim();
}

const DEFAULT_POOL = {
  image: 'local',
  backend: 'local',
  autoscaling: { min: 2, initial: 2, max: 4 },
};

/**
 * ensureDefaultTenant creates the default tenant and its admin key on the first start, and the
 * pool `default` through the API (so it goes through the same validation and audit as any PUT).
 */
export async function ensureDefaultTenant(ctx) {
  const keyFile = join(ctx.dataRoot, 'admin-key');
  if (!existsSync(keyFile)) {
    const load = (p) => import(pathToFileURL(join(ctx.root, p)).href);
    const [{ createDb }, tenancy] = await Promise.all([
      load('packages/db/dist/index.js'),
      load('packages/tenancy/dist/index.js'),
    ]);
    const db = createDb({ databaseUrl: ctx.env.DATABASE_URL, maxConnections: 2 });
    try {
      const tenant = await tenancy.createTenant(db, { name: 'default' });
      const key = await tenancy.createApiKey(db, {
        tenantId: tenant.id,
        name: 'embedded admin',
        role: 'admin',
      });
      writeFileSync(keyFile, `${key.key}\n`, { mode: 0o600 });
      ctx.log(`created tenant ${tenant.id} and its admin key (${key.prefix}…)`);
    } finally {
      await db.$disconnect();
    }
  }
  ctx.adminKey = readFileSync(keyFile, 'utf8').trim();
  const pool = await fetch(`${ctx.apiUrl}/v1/pools/default`, {
    headers: { authorization: `Bearer ${ctx.adminKey}` },
  });
  if (pool.status === 404) {
    const put = await fetch(`${ctx.apiUrl}/v1/pools/default`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ctx.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(DEFAULT_POOL),
    });
    if (!put.ok) throw new Error(`creating pool default failed: ${put.status} ${await put.text()}`);
    ctx.log('created pool default (2 warm desktops)');
  } else if (!pool.ok) {
    throw new Error(`reading pool default failed: ${pool.status} ${await pool.text()}`);
  }
}
