// docs/rbac.md's table of the operator's ClusterRole is held to what
// `syncprims install` grants (src/cli/install/install-rbac.ts): one row per
// rule, the same groups, resources and verbs, none missing, none extra.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPERATOR_NAME, operatorRbac, type PolicyRule } from '../../src/cli/install/install-rbac.js';

const DOC = fileURLToPath(new URL('../../docs/rbac.md', import.meta.url));

/** The table's rules: `` | `group` `a`, `b`: get, list | why | `` (core: `` core `a` ``). */
function documentedRules(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf('## `syncprims-operator`'), markdown.indexOf('## `syncprims-apply`'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `') || l.startsWith('| core '));
  return rows.map((row) => {
    const cell = row.split('|')[1]!.trim();
    const m = /^(core|`([^`]+)`) ((?:`[^`]+`(?:, )?)+): ([a-z, ]+)$/.exec(cell);
    if (!m) throw new Error(`docs/rbac.md: a row not in the form "group resources: verbs": ${cell}`);
    const group = m[1] === 'core' ? '' : m[2]!;
    const resources = [...m[3]!.matchAll(/`([^`]+)`/g)].map((r) => r[1]!);
    return ruleText({ apiGroups: [group], resources, verbs: m[4]!.split(', ') });
  });
}

function ruleText(rule: PolicyRule): string {
  return `${(rule.apiGroups ?? []).join(',') || 'core'} ${[...(rule.resources ?? [])].sort().join(',')}: ${[...rule.verbs].sort().join(',')}`;
}

function grantedRules(): string[] {
  const role = operatorRbac('syncprims-system', false).find((o) => o.kind === 'ClusterRole' && o.metadata.name === OPERATOR_NAME) as { rules: PolicyRule[] } | undefined;
  return (role?.rules ?? []).map(ruleText);
}

describe("docs/rbac.md's operator table", () => {
  test('reads the rules of each row', () => {
    expect(documentedRules('## `syncprims-operator`\n| rule | why |\n| core `a`, `b`: get, list | x |\n| `apps` `c`: create | y |\n## `syncprims-apply`')).toEqual(['core a,b: get,list', 'apps c: create']);
  });

  test('names every rule install-rbac.ts grants the operator, and no other', () => {
    const granted = grantedRules();
    expect(granted.length).toBeGreaterThan(10);
    expect(documentedRules(readFileSync(DOC, 'utf8')).sort()).toEqual(granted.sort());
  });
});
