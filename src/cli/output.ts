import { stringify } from 'yaml';
import type { KubeObject } from '../kube/resources.js';

/**
 * Objects as YAML or JSON. YAML is written for YAML 1.1 readers (kubectl):
 * strings such as `0644`, `yes` or `1:20` are quoted, so that reading the
 * output back gives the same values; long strings are never folded.
 */

export function toYaml(value: unknown): string {
  return stringify(value, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false });
}

/** JSON, with DEL and C1 characters (which JSON.stringify leaves raw) escaped: the same value, and no byte a terminal acts on. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/** Several objects as one, as kubectl prints them: a `v1` `List`. */
export function listOf(items: readonly KubeObject[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/** Documents separated by `---`, as kubectl reads them from a file. */
export function yamlStream(objects: readonly unknown[]): string {
  return objects.map((o) => `---\n${toYaml(o)}`).join('');
}
