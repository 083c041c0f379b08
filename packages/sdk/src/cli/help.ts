import type { OptionDefs } from './args.js';
import { GLOBAL_OPTIONS, type CommandSpec } from './command.js';

/** synopsis is a command's usage line: words, arguments, flags, `-- <command…>`. */
export function synopsis(spec: CommandSpec): string {
  const flags = Object.entries(spec.options ?? {}).map(([name, o]) => {
    const form = o.short ? `-${o.short}` : `--${name}`;
    return o.type === 'string' ? `[${form} <${o.value ?? 'value'}>]` : `[${form}]`;
  });
  return ['cubicle', ...spec.path, spec.args, ...flags, spec.rest ? `-- ${spec.rest}` : undefined]
    .filter(Boolean)
    .join(' ');
}

function optionLines(options: OptionDefs): string[] {
  const left = Object.entries(options).map(([name, o]) => {
    const short = o.short ? `-${o.short}, ` : '    ';
    return `  ${short}--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;
  });
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return Object.values(options).map((o, i) => `${left[i]!.padEnd(width)}${o.description}`);
}

/** commandHelp is what `cubicle <command> --help` prints. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: ${synopsis(spec)}`, '', spec.summary];
  if (spec.details) lines.push('', spec.details);
  if (spec.options && Object.keys(spec.options).length > 0)
    lines.push('', 'Options:', ...optionLines(spec.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  return `${lines.join('\n')}\n`;
}

/** groupHelp is what `cubicle pools --help` prints: the group's commands. */
export function groupHelp(group: string, specs: CommandSpec[]): string {
  const own = specs.filter((s) => s.path[0] === group && s.path.length > 1);
  return `Usage: cubicle ${group} <command>\n\n${listing(own)}\nRun \`cubicle ${group} <command> --help\` for a command's flags.\n`;
}

function listing(specs: CommandSpec[]): string {
  const left = specs.map((s) => [...s.path, s.args].filter(Boolean).join(' '));
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return specs.map((s, i) => `  ${left[i]!.padEnd(width)}${s.summary}\n`).join('');
}

/** usage is what `cubicle --help` prints: every command, the conventions, the exit codes. */
export function usage(specs: CommandSpec[]): string {
  return `cubicle: the Cubicle command line (operator tasks are \`npm run cubicle\` in the repository)

Usage: cubicle <command> [flags]

${listing(specs)}
Every command takes --help, --json (one JSON document, or one per event for runs logs) and
--url/--api-key (else CUBICLE_URL / CUBICLE_API_KEY, else the login file). Progress goes to
stderr. \`cubicle --version\` prints the version.
Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 rejected by the API, 6 API unavailable,
7 pools apply not confirmed; cubicle shell and runs start -f: the command's own code (124 timed out).
`;
}
