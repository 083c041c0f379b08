#!/usr/bin/env node
// Regenerates infra/terraform/docs/ (registry format) from the provider's schema and examples/:
// builds tfplugindocs v0.25.0 from the Go module proxy into the tools cache (once), builds the
// provider, asks OpenTofu for its schema through a dev override (no registry, no Terraform
// download), and renders. docs_test.go fails when docs/ no longer matches the schema.
//   node infra/terraform/generate-docs.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from '../../scripts/lib/kube-go.mjs';
import { kubeToolsDir } from '../../scripts/lib/kube-paths.mjs';
import { ensureTofu } from '../../scripts/lib/tofu-tools.mjs';

const TFPLUGINDOCS = 'v0.25.0';
const ADDRESS = 'registry.opentofu.org/cubicle/cubicle';
const here = dirname(fileURLToPath(import.meta.url));

function check(result, what) {
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    throw new Error(`${what} failed (${result.status})`);
  }
  return result.stdout;
}

const tools = kubeToolsDir();
const { go, env: goEnv } = await findGo(tools);
const env = { ...process.env, ...goCacheEnv(tools), ...goEnv, CHECKPOINT_DISABLE: '1' };
const docsBin = join(tools, `tfplugindocs-${TFPLUGINDOCS}`, 'tfplugindocs');
if (!existsSync(docsBin)) {
  await runGo(
    go,
    ['install', `github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs@${TFPLUGINDOCS}`],
    {
      cwd: tools,
      env: { ...goCacheEnv(tools), ...goEnv, GOBIN: dirname(docsBin) },
      logFile: join(tools, 'tfplugindocs-build.log'),
      label: `tfplugindocs ${TFPLUGINDOCS}: go install`,
    },
  );
}
const tofu = await ensureTofu();

const work = mkdtempSync(join(tmpdir(), 'cubicle-docs-'));
try {
  check(
    spawnSync(go, ['build', '-o', join(work, 'terraform-provider-cubicle'), '.'], {
      cwd: here,
      env,
      encoding: 'utf8',
    }),
    'go build',
  );
  const rc = join(work, 'tofurc');
  writeFileSync(
    rc,
    `provider_installation {\n  dev_overrides {\n    "${ADDRESS}" = "${work}"\n  }\n  direct {}\n}\n`,
  );
  writeFileSync(
    join(work, 'main.tf'),
    `terraform {\n  required_providers {\n    cubicle = { source = "${ADDRESS}" }\n  }\n}\n`,
  );
  const schema = JSON.parse(
    check(
      spawnSync(tofu, ['providers', 'schema', '-json'], {
        cwd: work,
        env: { ...env, TF_CLI_CONFIG_FILE: rc },
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      }),
      'tofu providers schema',
    ),
  );
  // tfplugindocs looks the provider up by its short name (or under registry.terraform.io/hashicorp).
  schema.provider_schemas = { cubicle: schema.provider_schemas[ADDRESS] };
  const schemaFile = join(work, 'schema.json');
  writeFileSync(schemaFile, JSON.stringify(schema));
  check(
    spawnSync(
      docsBin,
      [
        'generate',
        '--provider-name',
        'cubicle',
        '--providers-schema',
        schemaFile,
        '--provider-dir',
        here,
      ],
      { cwd: here, env, encoding: 'utf8' },
    ),
    'tfplugindocs generate',
  );
  // The repository's format check covers docs/ too.
  check(
    spawnSync(join(here, '../../node_modules/.bin/prettier'), ['--write', join(here, 'docs')], {
      env,
      encoding: 'utf8',
    }),
    'prettier --write docs',
  );
  console.log(
    `docs regenerated in ${join(here, 'docs')} (${readFileSync(join(here, 'docs/index.md'), 'utf8').length} bytes of index)`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
