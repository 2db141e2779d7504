// Kubernetes label selectors (metav1.LabelSelector), matched in memory: the
// FleetSync's `spec.clusters.selector` over the labels of the inventory's
// clusters.

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/**
 * Whether `labels` match `selector`, as the API server matches them: every
 * matchLabels pair and every expression must hold (an empty selector matches
 * everything). `In` needs the key with one of the values; `NotIn` holds when
 * the key is absent or has none of them; `Exists` / `DoesNotExist` look at the
 * key only.
 */
export function matchesSelector(labels: Record<string, string>, selector: LabelSelector): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((r) => matchesRequirement(labels, r));
}

function matchesRequirement(labels: Record<string, string>, r: LabelSelectorRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[r.key]!);
    case 'NotIn':
      return !has || !values.includes(labels[r.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      // An operator the schema should have refused: it selects nothing rather than everything.
      return false;
  }
}

/** Why a selector cannot be used (the API server's rules for metav1.LabelSelector), or undefined when it can. */
export function selectorProblem(selector: LabelSelector): string | undefined {
  for (const [i, r] of (selector.matchExpressions ?? []).entries()) {
    const values = r.values ?? [];
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(r.operator)) {
      return `matchExpressions[${i}]: operator ${String(r.operator)} is not one of In, NotIn, Exists, DoesNotExist`;
    }
    if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
      return `matchExpressions[${i}]: operator ${r.operator} needs at least one value`;
    }
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
      return `matchExpressions[${i}]: operator ${r.operator} takes no values`;
    }
  }
  return undefined;
}

/** A selector as `kubectl` writes one (`a=b,c in (d,e),!f`), for messages and tables. */
export function describeSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const r of selector.matchExpressions ?? []) {
    const values = (r.values ?? []).join(',');
    if (r.operator === 'In') parts.push(`${r.key} in (${values})`);
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${values})`);
    else if (r.operator === 'Exists') parts.push(r.key);
    else parts.push(`!${r.key}`);
  }
  return parts.join(',') || '(everything)';
}
