// --allow-kubeconfig-exec: a list of namespaces, or bare (every namespace) outside the multi-tenant mode.
import { describe, expect, test } from '@jest/globals';
import { allowExecOf } from '../../src/cli/run/kubeconfig-exec-flag.js';

describe('allowExecOf (--allow-kubeconfig-exec)', () => {
  test('absent: no namespace; a list: those namespaces (spaces trimmed, each once)', () => {
    expect(allowExecOf(undefined, false)).toBe(false);
    expect(allowExecOf(undefined, true)).toBe(false);
    expect(allowExecOf('team-a', true)).toEqual(['team-a']);
    expect(allowExecOf('team-a, team-b,team-a', true)).toEqual(['team-a', 'team-b']);
  });

  test('bare: every namespace for an operator of one tenant; refused in the multi-tenant mode, saying how to name them', () => {
    expect(allowExecOf(true, false)).toBe(true);
    expect(() => allowExecOf(true, true)).toThrow(
      '--allow-kubeconfig-exec without namespaces lets the kubeconfig of every namespace run a command in the operator, which the multi-tenant mode (--default-service-account) does not allow: name the namespaces trusted to, --allow-kubeconfig-exec=ns1,ns2',
    );
  });

  test('an entry that is not a namespace name is refused, naming it', () => {
    expect(() => allowExecOf('team-a,Team_B', false)).toThrow('--allow-kubeconfig-exec=team-a,Team_B: "Team_B" must be a DNS-1123 label (a namespace name)');
    expect(() => allowExecOf('', false)).toThrow('--allow-kubeconfig-exec=: "" must be a DNS-1123 label');
    expect(() => allowExecOf('a,,b', false)).toThrow('"" must be a DNS-1123 label');
    expect(() => allowExecOf('*', false)).toThrow('"*" must be a DNS-1123 label');
  });
});
