import { EGRESS_CA_PATH } from '@cubicle/driver-guest';
import { GUEST_PORT } from '../kube/names.js';
import { poolEnvEntries } from '../kube/template.js';

/** shellQuote makes any string one POSIX shell word (single quotes; embedded ones closed and escaped). */
export const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** Where the desktop image installs the launcher (images/desktop/Dockerfile puts it on PATH). */
export const LAUNCHER = 'cubicle-desktop';

/** Where Debian's update-ca-certificates picks up a local CA for the system bundle. */
export const LOCAL_CA_FILE = '/usr/local/share/ca-certificates/cubicle-egress-ca.crt';

/**
 * buildCloudConfig is a VM's cloud-init user data (stored in the sandbox Secret, key `userdata`,
 * never inline in the VMI). It writes the guest token and the pool's env to an env file only the desktop user reads
 * and runs the same launcher as the container image under systemd, so a crashed desktop is
 * restarted in place. JSON strings are valid YAML scalars, which keeps quoting exact.
 * With `egressCa` (the egress point injects credentials) the guest trusts that CA as a Pod does:
 * in the system bundle (update-ca-certificates, before the desktop starts), alone at
 * EGRESS_CA_PATH with NODE_EXTRA_CA_CERTS, and in the user's NSS database (the launcher).
 */
export function buildCloudConfig(input: {
  token: string;
  env: Record<string, string>;
  egressCa?: string | undefined;
}): string {
  const envFile = [
    ...poolEnvEntries(input.env),
    ...(input.egressCa ? [['NODE_EXTRA_CA_CERTS', EGRESS_CA_PATH]] : []),
    ['CUBICLE_GUEST_TOKEN', input.token],
    ['CUBICLE_GUEST_PORT', String(GUEST_PORT)],
  ]
    .map(([name, value]) => `export ${name}=${shellQuote(value as string)}\n`)
    .join('');
  const unit = [
    '[Unit]',
    'Description=Cubicle desktop and guest driver',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'User=cubicle',
    // The env file is readable by the desktop user only (the image creates that user).
    `ExecStart=/bin/sh -c '. /etc/cubicle/guest.env && exec ${LAUNCHER} start --daemon child'`,
    'Restart=always',
    'RestartSec=2',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  const lines = [
    '#cloud-config',
    'write_files:',
    `  - path: /etc/cubicle/guest.env`,
    `    permissions: "0600"`,
    `    owner: "cubicle:cubicle"`,
    `    content: ${JSON.stringify(envFile)}`,
    `  - path: /etc/systemd/system/cubicle-desktop.service`,
    `    permissions: "0644"`,
    `    content: ${JSON.stringify(unit)}`,
    ...(input.egressCa
      ? [LOCAL_CA_FILE, EGRESS_CA_PATH].flatMap((path) => [
          `  - path: ${path}`,
          `    permissions: "0644"`,
          `    content: ${JSON.stringify(input.egressCa)}`,
        ])
      : []),
    'runcmd:',
    ...(input.egressCa ? [`  - ["update-ca-certificates"]`] : []),
    `  - ["systemctl", "daemon-reload"]`,
    `  - ["systemctl", "enable", "--now", "cubicle-desktop.service"]`,
    '',
  ];
  return lines.join('\n');
}
