// Curated example values of the OpenAPI document: what a person would send or see. A unit test
// parses every example built from them with its route's zod schema.

/**
 * FIELD_EXAMPLES are values a person would send or see, by field name, in order of preference:
 * the first that fits the field's schema (type, pattern, bounds) is used, so one name can serve
 * fields of different kinds (`name` of a pool, `name` of a secret). Examples follow the schemas
 * because a unit test parses every one with the route's zod schema.
 */
export const FIELD_EXAMPLES: Record<string, unknown[]> = {
  image: ['registry.example.com/cubicle/desktop:1.0'],
  name: ['default', 'GITHUB_TOKEN', 'ci-runner'],
  pool: ['default'],
  description: ['Claim lifecycle notifications'],
  path: ['/home/user/notes.txt'],
  cwd: ['/home/user'],
  argv: [['python3', '-c', "print('hello')"]],
  command: ['ls -la /home/user'],
  content: ['Hello from Cubicle\n'],
  data: ['yes\n'],
  stdin: ['yes\n'],
  text: ['Hello, world'],
  query: ['Save'],
  title: ['notes.txt - Text Editor'],
  value: ['s3cr3t-example-value'],
  ticket: ['vt1.eyJ0aWNrZXQiOiJleGFtcGxlIn0.c2lnbmF0dXJl'],
  url: ['https://example.com/hooks/cubicle', 'https://example.com/'],
  mode: ['644'],
  key: ['cub_3f1c2a9e8d4b4f0a9c1e2b7d5a6e8f10', 'dedicated'],
  keys: ['ctrl+s'],
  run_id: ['build-1'],
  role: ['push_button', 'member'],
  roles: [['push_button', 'text']],
  events: [['claim.activated', 'claim.ended']],
  embed_origins: [['https://app.example.com']],
  secrets: [{ API_TOKEN: 's3cr3t-example-value' }, ['GITHUB_TOKEN']],
  stored_secrets: [['GITHUB_TOKEN']],
  hosts: [['api.github.com']],
  header: ['Authorization'],
  format: ['Bearer {value}'],
  metadata: [{ team: 'agents' }],
  env: [{ LANG: 'C.UTF-8' }],
  node_selector: [{ 'kubernetes.io/arch': 'amd64' }],
  autoscaling: [{ min: 1, initial: 2, max: 5 }],
  memory_mb: [4096],
  cpu: [2],
  ttl_seconds: [900],
  claim_ttl_seconds: [900],
  max_claim_lifetime_seconds: [28_800],
  idle_timeout_seconds: [300],
  wait_seconds: [20],
  window_id: [4_194_311],
  x: [640],
  y: [400],
  to_x: [800],
  to_y: [400],
  dy: [3],
  length: [4096],
  timeout_ms: [30_000],
  timeout_seconds: [600],
  grace_seconds: [2],
  limit: [50],
  after_seq: [0],
  exit_code: [0],
  from: ['2026-11-01T00:00:00.000Z'],
  to: ['2026-12-01T00:00:00.000Z'],
  version: ['0.1.0'],
  action: ['claim.create'],
  secret: ['whsec_c2VjcmV0LWV4YW1wbGU='],
};

/** Strings with neither a curated value nor a pattern-derived id fall back to the first that fits. */
export const FALLBACK_WORDS = ['example', 'EXAMPLE', 's1', 's1:1', 'p1', '42', 'a'];

/**
 * REQUEST_EXAMPLES are bodies written by hand where a derived one would pick an arbitrary branch
 * of a union or miss the point of the call.
 */
export const REQUEST_EXAMPLES: Record<string, unknown> = {
  applyPool: {
    image: 'registry.example.com/cubicle/desktop:1.0',
    cpu: 2,
    memory_mb: 4096,
    autoscaling: { min: 1, initial: 2, max: 5 },
    claim_ttl_seconds: 900,
    prime: {
      apps: [
        {
          app: 'browser',
          url: 'https://example.com/',
          wait_for: { kind: 'window_title', contains: 'Example Domain' },
        },
      ],
      timeout_seconds: 60,
    },
  },
  createClaim: { ttl_seconds: 900, metadata: { team: 'agents' }, wait_seconds: 20 },
  createApiKey: { name: 'ci-runner', role: 'member' },
  actClaim: { action: 'click', window_id: 4_194_311, element_token: 's1:1' },
  inputClaim: {
    action: 'click',
    window_id: 4_194_311,
    screenshot_id: 'p1',
    x: 640,
    y: 400,
    delivery_mode: 'foreground',
  },
  verifyClaim: {
    window_id: 4_194_311,
    predicates: [{ kind: 'element_exists', selector: { role: 'push_button', name: 'Save' } }],
  },
  screenshotClaim: { max_dimension: 1568 },
  runClaimShell: { command: 'ls -la /home/user', timeout_ms: 30_000 },
  readClaimFile: { path: '/home/user/notes.txt' },
  writeClaimFile: { path: '/home/user/notes.txt', content: 'Hello from Cubicle\n' },
  listClaimFiles: { path: '/home/user' },
  deleteClaimFile: { path: '/home/user/notes.txt', missing_ok: true },
  launchClaimWindow: { app: 'browser', url: 'https://example.com/' },
  closeClaimWindow: { window_id: 4_194_311 },
  observeClaim: { window_id: 4_194_311 },
  createRun: { argv: ['python3', 'agent.py', '--task', 'report'], cwd: '/home/user' },
  writeRunStdin: { data: 'yes\n' },
  cancelRun: { grace_seconds: 2 },
  createSecret: { name: 'API_TOKEN', value: 's3cr3t-example-value' },
  createStoredSecret: { name: 'GITHUB_TOKEN', value: 's3cr3t-example-value', usable_by: 'members' },
  putStoredSecret: { value: 's3cr3t-example-value' },
  createWebhook: {
    url: 'https://example.com/hooks/cubicle',
    events: ['claim.activated', 'claim.ended'],
    description: 'Claim lifecycle notifications',
  },
  updateWebhook: { enabled: false },
  updateClaim: { ttl_seconds: 1800 },
};
