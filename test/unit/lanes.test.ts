// make test's two lanes (test/support/lanes-runner.js): which file runs in
// which, and that a file in the own lane never names a shared cluster (it
// would then run beside the shared lane's files on the same cluster).
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownLane } from '../support/lanes-runner.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const integration = readdirSync(path.join(ROOT, 'integration')).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(ROOT, 'integration', f));
/** A shared cluster named where a file reaches a cluster: a client, a start, a namespace, CRDs, a kubeconfig, an operator, a constant, a port (a proxy in front of one). */
const SHARED = /(?:clusterClient|ensureClusters|clusterApi|useTestNamespace|useOperatedNamespace|useRemoteNamespace|useClusterProxy|installCrds|kubeconfigOf|kubeconfigPath|OperatorProcess\.start)\(\[?'(?:mgmt|edge-1|edge-2)'|const [A-Z_0-9]+ = '(?:mgmt|edge-1|edge-2)'|127\.0\.0\.1:644[123]\b|\(644[123]\)/;

describe('lanes', () => {
  test('unit tests and marked integration files go to the own lane; the rest to the shared lane', () => {
    expect(ownLane(path.join(ROOT, 'unit', 'lanes.test.ts'))).toBe(true);
    expect(ownLane(path.join(ROOT, 'integration', 'journeys.test.ts'))).toBe(true);
    expect(ownLane(path.join(ROOT, 'integration', 'remotesync.test.ts'))).toBe(false);
    const own = integration.filter(ownLane);
    expect(own.length).toBeGreaterThanOrEqual(5);
    expect(own.length).toBeLessThan(integration.length);
  });

  test('no file of the own lane reaches a shared cluster (mgmt, edge-1, edge-2)', () => {
    const offenders = integration.filter(ownLane).filter((f) => SHARED.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.basename(f))).toEqual([]);
  });

  test('the check finds a shared cluster where a file names one', () => {
    for (const line of ["const CLUSTER = 'mgmt';", "await clusterClient('edge-2')", "installCrds('edge-1')", 'server: "https://127.0.0.1:6441"', 'StallingProxy.start(6441)']) expect(SHARED.test(line)).toBe(true);
    for (const line of ["const CLUSTER = OWN_LANE_CLUSTER;", "const [MGMT] = ['journey-mgmt'];", "for (const edge of ['edge-1', 'edge-2'])"]) expect(SHARED.test(line)).toBe(false);
  });
});
