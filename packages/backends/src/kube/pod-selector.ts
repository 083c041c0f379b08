// The label selector that names the control-plane Pods a sandbox admits, in Kubernetes' own
// text form, as an operator writes it (and as the Helm chart renders it).

/** A Pod label selector in the API's shape: equality terms plus `key in (a,b)` terms. */
export interface PodLabelSelector {
  matchLabels: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In'; values: string[] }[];
}

const KEY = '[A-Za-z0-9][-A-Za-z0-9_./]{0,252}';
const VALUE = '[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const EQUALITY = new RegExp(`^(${KEY})\\s*==?\\s*(${VALUE})?$`);
const SET = new RegExp(`^(${KEY})\\s+in\\s+\\(([^()]*)\\)$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

/** splitTerms splits on the commas outside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter(Boolean);
}

/**
 * parsePodSelector reads `a=b,c in (x,y)` into matchLabels and `In` matchExpressions. Anything
 * else (negation, `notin`, `!key`, bare keys, an empty selector) throws: those widen what the
 * sandbox admits, and a typo in configuration must stop the worker instead of opening the policy.
 */
export function parsePodSelector(selector: string): PodLabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<PodLabelSelector['matchExpressions']> = [];
  for (const term of splitTerms(selector)) {
    const equality = EQUALITY.exec(term);
    if (equality) {
      matchLabels[equality[1]!] = equality[2] ?? '';
      continue;
    }
    const set = SET.exec(term);
    const values = set?.[2]?.split(',').map((v) => v.trim());
    if (!set || !values?.length || !values.every((v) => VALUE_ONLY.test(v)))
      throw new Error(`not an equality or "in" label selector term: ${JSON.stringify(term)}`);
    matchExpressions.push({ key: set[1]!, operator: 'In', values });
  }
  if (Object.keys(matchLabels).length + matchExpressions.length === 0)
    throw new Error('the label selector is empty');
  return { matchLabels, ...(matchExpressions.length > 0 && { matchExpressions }) };
}

/** selectorMatches says whether a Pod with these labels is selected. */
export function selectorMatches(
  selector: PodLabelSelector,
  labels: Record<string, string>,
): boolean {
  return (
    Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v) &&
    (selector.matchExpressions ?? []).every(
      (e) => labels[e.key] !== undefined && e.values.includes(labels[e.key]!),
    )
  );
}
