// The field-made alternative the egress bench measures the egress point against: Squid in
// intercept mode with SNI peek-and-splice (no TLS termination) for HTTPS and plain interception
// for HTTP, on its own sandbox-like namespace and link, redirected by its own nftables table.
// Bench-only: it allows everything (the data path is compared, not the policy), listens only on
// its link's host address, and everything it makes is removed by name in stop().
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
const run = (command, args, input) =>
  execFileSync(command, args, { env: { PATH }, stdio: ['pipe', 'pipe', 'pipe'], input });
const HOST = '10.215.0.1';
const SANDBOX = '10.215.0.2';

export const hasSquid = () => existsSync('/usr/sbin/squid');

/**
 * startSquidPath makes the namespace, link, nft table and Squid; returns its netns path and pid.
 * `bump` (--inject) has Squid terminate TLS for one host with certificates it mints from the
 * given CA (ssl-bump, security_file_certgen) and add a header to its requests, as the egress
 * point does for a bound credential; every other host is still spliced.
 */
export async function startSquidPath({ dns, caPem, bump = null }) {
  const tag = process.pid.toString(36);
  const netns = `cubicle-bench-squid-${tag}`;
  const hostIf = `cbq${tag}`.slice(0, 15);
  const table = `cubicle_bench_squid_${tag}`;
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-bench-squid-'));
  let squid = null;
  const stop = async () => {
    if (squid && squid.exitCode === null) {
      squid.kill('SIGKILL');
      await new Promise((resolve) => squid.once('exit', resolve));
    }
    for (const args of [
      ['netns', 'delete', netns],
      ['link', 'delete', hostIf],
    ])
      try {
        run('ip', args);
      } catch {
        /* gone */
      }
    try {
      run('nft', ['delete', 'table', 'inet', table]);
    } catch {
      /* gone */
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run('ip', ['netns', 'add', netns]);
    run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    run('ip', ['addr', 'add', `${HOST}/30`, 'dev', hostIf]);
    run('ip', ['link', 'set', hostIf, 'up']);
    run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', netns, 'addr', 'add', `${SANDBOX}/30`, 'dev', 'eth0']);
    run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
    run('ip', ['-n', netns, 'route', 'add', 'default', 'via', HOST]);
    run(
      'nft',
      ['-f', '-'],
      `table inet ${table} {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "${hostIf}" tcp dport 443 redirect to :3129
    iifname "${hostIf}" tcp dport 80 redirect to :3128
  }
  chain input {
    type filter hook input priority filter - 10; policy accept;
    iifname "${hostIf}" tcp dport { 3128, 3129 } accept
    iifname "${hostIf}" drop
  }
}
`,
    );
    // Squid insists on a certificate for an ssl-bump port even when it only splices.
    run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'bump.pem'),
      '-out',
      join(dir, 'bump.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=bench squid',
    ]);
    writeFileSync(join(dir, 'ca.pem'), caPem);
    if (bump) {
      writeFileSync(
        join(dir, 'bump-ca.pem'),
        `${bump.ca.certPem.trim()}\n${bump.ca.keyPem.trim()}\n`,
      );
      run('/usr/lib/squid/security_file_certgen', ['-c', '-s', join(dir, 'ssl_db'), '-M', '4MB']);
      run('chown', ['-R', '13:13', join(dir, 'ssl_db')]);
    }
    const bumpConf = bump
      ? `acl bound ssl::server_name ${bump.host}
ssl_bump bump bound
sslcrtd_program /usr/lib/squid/security_file_certgen -s ${dir}/ssl_db -M 4MB
sslcrtd_children 2 startup=1 idle=1
acl boundhost dstdomain ${bump.host}
request_header_add ${bump.header} "${bump.value}" boundhost
`
      : '';
    writeFileSync(
      join(dir, 'squid.conf'),
      `
http_port ${HOST}:3128 intercept
https_port ${HOST}:3129 intercept ssl-bump tls-cert=${dir}/${bump ? 'bump-ca.pem' : 'bump.pem'} generate-host-certificates=${bump ? 'on' : 'off'}
http_port ${HOST}:3130
acl step1 at_step SslBump1
ssl_bump peek step1
${bumpConf}ssl_bump splice all
http_access allow all
cache deny all
dns_nameservers ${dns}
pid_filename ${dir}/squid.pid
cache_log ${dir}/cache.log
access_log none
coredump_dir ${dir}
shutdown_lifetime 1 second
tls_outgoing_options cafile=${dir}/ca.pem
`,
    );
    chmodSync(dir, 0o755);
    chownSync(dir, 13, 13); // Debian's proxy user, which Squid drops to
    squid = spawn('squid', ['-N', '-f', join(dir, 'squid.conf')], {
      env: { PATH },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    squid.stderr.on('data', (d) => (stderr += d));
    for (let i = 0; ; i += 1) {
      const listening = run('ss', ['-ltnH', `src ${HOST}`]).toString();
      if (listening.includes(':3129')) break;
      if (squid.exitCode !== null || i > 100) throw new Error(`squid did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { netnsPath: `/run/netns/${netns}`, pid: squid.pid, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
