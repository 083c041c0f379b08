/**
 * parseYaml reads the YAML subset a pools file needs: block mappings and sequences by
 * indentation, `#` comments, plain, single- and double-quoted scalars (numbers, booleans, null)
 * and one-line flow lists/maps (`[a, b]`, `{}`). Anchors, tags and multi-line scalars are not
 * supported and are an error rather than a guess. (The SDK has no runtime dependencies, so no
 * YAML library.) JSON is accepted too, being a flow mapping.
 */
export function parseYaml(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return JSON.parse(trimmed);
  const lines: Line[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const content = stripComment(raw).trimEnd();
    if (content.trim() === '' || content.trim() === '---') return;
    if (/^\s*\t/.test(content)) throw new YamlError(i + 1, 'tabs are not allowed for indentation');
    lines.push({
      indent: content.length - content.trimStart().length,
      text: content.trim(),
      no: i + 1,
    });
  });
  if (lines.length === 0) return null;
  const state = { i: 0 };
  const value = parseBlock(lines, state, lines[0]!.indent);
  if (state.i < lines.length) throw new YamlError(lines[state.i]!.no, 'unexpected indentation');
  return value;
}

export class YamlError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

interface Line {
  indent: number;
  text: string;
  no: number;
}

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

function parseBlock(lines: Line[], state: { i: number }, indent: number): unknown {
  const first = lines[state.i]!;
  return first.text === '-' || first.text.startsWith('- ')
    ? parseList(lines, state, indent)
    : parseMap(lines, state, indent);
}

function parseList(lines: Line[], state: { i: number }, indent: number): unknown[] {
  const out: unknown[] = [];
  while (state.i < lines.length) {
    const line = lines[state.i]!;
    if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) break;
    const rest = line.text.slice(1).trimStart();
    if (rest === '') {
      state.i++;
      out.push(nested(lines, state, indent));
    } else if (isMapEntry(rest)) {
      // `- key: value` opens a mapping whose other keys sit under `key`.
      const inner = indent + (line.text.length - rest.length);
      lines[state.i] = { indent: inner, text: rest, no: line.no };
      out.push(parseMap(lines, state, inner));
    } else {
      state.i++;
      out.push(scalar(rest, line.no));
    }
  }
  return out;
}

function parseMap(lines: Line[], state: { i: number }, indent: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  while (state.i < lines.length) {
    const line = lines[state.i]!;
    if (line.indent !== indent) break;
    const match = /^("[^"]*"|'[^']*'|[^:]+?):(?:\s+(.*))?$/.exec(line.text);
    if (!match) throw new YamlError(line.no, `expected "key: value", got "${line.text}"`);
    const key = String(scalar(match[1]!, line.no));
    if (key in out) throw new YamlError(line.no, `duplicate key ${key}`);
    state.i++;
    out[key] = match[2] === undefined ? nested(lines, state, indent) : scalar(match[2], line.no);
  }
  return out;
}

/** nested reads the block under a `key:` or `-`: deeper lines, or a list at the same indent. */
function nested(lines: Line[], state: { i: number }, indent: number): unknown {
  const next = lines[state.i];
  if (!next) return null;
  if (next.indent > indent) return parseBlock(lines, state, next.indent);
  if (next.indent === indent && next.text.startsWith('- ')) return parseList(lines, state, indent);
  return null;
}

function isMapEntry(text: string): boolean {
  return /^("[^"]*"|'[^']*'|[^:'"[{]+?):(\s|$)/.test(text);
}

function scalar(text: string, no: number): unknown {
  const t = text.trim();
  if (t.startsWith('"')) return JSON.parse(t);
  if (t.startsWith("'")) return t.slice(1, -1).replaceAll("''", "'");
  if (t.startsWith('[') || t.startsWith('{')) return flow(t, no);
  if (t.startsWith('&') || t.startsWith('*') || t.startsWith('!') || t === '|' || t === '>')
    throw new YamlError(no, `unsupported YAML: ${t}`);
  if (t === 'null' || t === '~') return null;
  if (t === 'true' || t === 'false') return t === 'true';
  if (/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number(t);
  return t;
}

function flow(text: string, no: number): unknown {
  const inner = text.slice(1, -1).trim();
  if (text.startsWith('[')) return inner === '' ? [] : inner.split(',').map((p) => scalar(p, no));
  if (inner === '') return {};
  return Object.fromEntries(
    inner.split(',').map((pair) => {
      const at = pair.indexOf(':');
      if (at < 0) throw new YamlError(no, `expected "key: value" in ${text}`);
      return [String(scalar(pair.slice(0, at), no)), scalar(pair.slice(at + 1), no)];
    }),
  );
}
