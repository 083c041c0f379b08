import { readFileSync } from 'node:fs';
import { UsageError } from './args.js';
import {
  collect,
  intOption,
  listOption,
  print,
  stringOption,
  table,
  when,
  type CommandSpec,
} from './command.js';
import { ExitCodes } from './exit-codes.js';
import { readLine, type Io } from './io.js';

// The tenant's own settings: stored secrets (values go in, never out), API keys, webhooks, usage.

/** secretValue reads a secret from a file or stdin (piped, or typed on a terminal), never argv. */
async function secretValue(io: Io, file: string | undefined): Promise<string> {
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      throw new UsageError(`cannot read ${file}`);
    }
  }
  if (io.stdin.isTTY === true) {
    io.stderr.write('value: ');
    return readLine(io);
  }
  let text = '';
  for await (const chunk of io.stdin) text += chunk.toString();
  // `echo value | cubicle secrets create` adds a newline that is not part of the value.
  return text.replace(/\r?\n$/, '');
}

const hours = (seconds: number) => `${(seconds / 3600).toFixed(2)} h`;

export const adminCommands: CommandSpec[] = [
  {
    path: ['secrets', 'ls'],
    summary: "list the tenant's stored secrets (names and versions, never values)",
    run: async ({ cubicle, io, json }) => {
      const secrets = await collect(cubicle.secrets.stored.list());
      const rows = secrets.map((s) => [
        s.name,
        `v${s.version}`,
        `usable by ${s.usable_by}`,
        `updated ${s.updated_at}`,
      ]);
      print(io, json, secrets, table(rows, '(no stored secrets)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['secrets', 'create'],
    args: '<NAME>',
    summary: 'store a secret (a new version if it exists); the value comes from stdin or a file',
    details:
      'The value is read from --from-file, else stdin (one trailing newline dropped), so it never\n' +
      'sits in shell history. Example: printf %s "$TOKEN" | cubicle secrets create GITHUB_TOKEN',
    options: {
      'from-file': { type: 'string', value: 'path', description: 'read the value from this file' },
      'usable-by': {
        type: 'string',
        value: 'admins|members',
        description: 'which keys may use it in a claim or run (default: admins)',
      },
    },
    run: async ({ cubicle, args, io, json }) => {
      const name = args.positionals[0]!;
      const value = await secretValue(io, stringOption(args, 'from-file'));
      if (value === '') throw new UsageError('the secret value is empty');
      const usableBy = stringOption(args, 'usable-by');
      const stored = await cubicle.secrets.stored.create({
        name,
        value,
        ...(usableBy !== undefined ? { usable_by: usableBy as 'admins' | 'members' } : {}),
      });
      print(io, json, stored, `stored ${stored.name} v${stored.version}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['secrets', 'delete'],
    args: '<NAME>',
    summary: 'delete a stored secret (every version)',
    run: async ({ cubicle, args, io, json }) => {
      const name = args.positionals[0]!;
      await cubicle.secrets.stored.delete(name);
      print(io, json, { name, deleted: true }, `deleted ${name}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['keys', 'ls'],
    summary: "list the tenant's API keys (prefixes, never the keys)",
    run: async ({ cubicle, io, json }) => {
      const keys = await collect(cubicle.apiKeys.list());
      const rows = keys.map((k) => [
        k.id,
        k.prefix,
        k.role,
        k.name,
        k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${when(k.last_used_at)}`,
      ]);
      print(io, json, keys, table(rows, '(no keys)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['keys', 'create'],
    summary: 'create an API key; the key is printed this once',
    options: {
      name: { type: 'string', value: 'name', description: 'what the key is for (required)' },
      role: { type: 'string', value: 'admin|member', description: 'default member' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const name = stringOption(args, 'name');
      if (name === undefined) throw new UsageError('keys create needs --name <name>');
      const role = stringOption(args, 'role');
      const created = await cubicle.apiKeys.create({
        name,
        ...(role !== undefined ? { role: role as 'admin' | 'member' } : {}),
      });
      if (!json)
        io.stderr.write(`created ${created.id} (${created.role}); the key is shown once:\n`);
      print(io, json, created, created.key);
      return ExitCodes.ok;
    },
  },
  {
    path: ['keys', 'revoke'],
    args: '<key-id>',
    summary: 'revoke an API key (it stops working at once)',
    run: async ({ cubicle, args, io, json }) => {
      const id = args.positionals[0]!;
      await cubicle.apiKeys.revoke(id);
      print(io, json, { id, revoked: true }, `revoked ${id}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['webhooks', 'ls'],
    summary: "list the tenant's webhook endpoints",
    run: async ({ cubicle, io, json }) => {
      const hooks = await collect(cubicle.webhooks.list());
      const rows = hooks.map((h) => [
        h.id,
        h.enabled ? 'enabled' : 'disabled',
        h.url,
        h.events.join(','),
      ]);
      print(io, json, hooks, table(rows, '(no webhooks)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['webhooks', 'create'],
    summary: 'add a webhook endpoint; its signing secret is printed this once',
    options: {
      endpoint: { type: 'string', value: 'url', description: 'where events are POSTed (required)' },
      event: {
        type: 'string',
        value: 'type',
        multiple: true,
        description: 'an event type, e.g. run.finished (repeatable or comma-separated; required)',
      },
      description: { type: 'string', value: 'text', description: 'a note for people' },
    },
    run: async ({ cubicle, args, io, json }) => {
      // Not --url: that is every command's API address.
      const url = stringOption(args, 'endpoint');
      const events = listOption(args, 'event').flatMap((e) => e.split(',').filter(Boolean));
      if (url === undefined || events.length === 0)
        throw new UsageError('webhooks create needs --endpoint <url> and --event <type>');
      const description = stringOption(args, 'description');
      const hook = await cubicle.webhooks.create({
        url,
        events: events as never,
        ...(description !== undefined ? { description } : {}),
      });
      if (!json) io.stderr.write(`created ${hook.id}; its signing secret is shown once:\n`);
      print(io, json, hook, hook.secret);
      return ExitCodes.ok;
    },
  },
  {
    path: ['webhooks', 'delete'],
    args: '<webhook-id>',
    summary: 'delete a webhook endpoint',
    run: async ({ cubicle, args, io, json }) => {
      const id = args.positionals[0]!;
      await cubicle.webhooks.delete(id);
      print(io, json, { id, deleted: true }, `deleted ${id}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['webhooks', 'deliveries'],
    args: '<webhook-id>',
    summary: "list an endpoint's deliveries, newest first, with their attempts",
    options: {
      status: { type: 'string', value: 'status', description: 'pending, delivered or failed' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const status = stringOption(args, 'status');
      const deliveries = await collect(
        cubicle.webhooks.deliveries(args.positionals[0]!, {
          ...(status !== undefined ? { status: status as 'pending' } : {}),
        }),
      );
      const rows = deliveries.map((d) => [
        d.id,
        d.event_type,
        d.status,
        `attempts ${d.attempt_count}`,
        d.last_status_code !== null ? `HTTP ${d.last_status_code}` : (d.last_error ?? '-'),
      ]);
      print(io, json, deliveries, table(rows, '(no deliveries)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['usage'],
    summary: "the tenant's desktop time per pool (default: the last 30 days)",
    options: {
      from: { type: 'string', value: 'time', description: 'ISO 8601 start (default: --days ago)' },
      to: { type: 'string', value: 'time', description: 'ISO 8601 end (default: now)' },
      days: { type: 'string', value: 'n', description: 'with no --from: the last n days (30)' },
      'group-by': {
        type: 'string',
        value: 'pool|day|hour',
        description: 'rows per (default pool)',
      },
    },
    run: async ({ cubicle, args, io, json }) => {
      const to = stringOption(args, 'to') ?? new Date().toISOString();
      if (Number.isNaN(Date.parse(to))) throw new UsageError(`--to ${to} is not a time`);
      const days = intOption(args, 'days') ?? 30;
      const from =
        stringOption(args, 'from') ?? new Date(Date.parse(to) - days * 86_400_000).toISOString();
      const groupBy = stringOption(args, 'group-by');
      const usage = await cubicle.usage.get({
        from,
        to,
        ...(groupBy !== undefined ? { group_by: groupBy as 'pool' } : {}),
      });
      const rows = usage.rows.map((r) => [
        r.pool,
        r.period_start ?? '',
        `claims ${r.claims}`,
        `claimed ${hours(r.claim_seconds)}`,
        `warm ${hours(r.warm_seconds)}`,
        `runs ${r.runs}`,
      ]);
      const t = usage.totals;
      const human =
        `${usage.from} .. ${usage.to}\n${table(rows, '(no usage)')}\n` +
        `total: claims ${t.claims}, claimed ${hours(t.claim_seconds)}, warm ${hours(t.warm_seconds)}, runs ${t.runs}`;
      print(io, json, usage, human);
      return ExitCodes.ok;
    },
  },
];
