// Playing the Deployment controller and the kubelet, which the local clusters do not run.
import type { Requester } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';

/** A Deployment of one replica whose image is never pulled here: it stays InProgress until markDeploymentAvailable. */
export function deploymentOf(name: string, namespace: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'example.invalid/app:1' }] } },
    },
  };
}

/**
 * Writes the status a Deployment has once its pods run and are available:
 * `replicas` of them (default: its spec's), for its current generation.
 */
export async function markDeploymentAvailable(client: Requester, namespace: string, name: string, replicas?: number): Promise<void> {
  const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`;
  const d = await client.request<{ metadata: { generation: number }; spec: { replicas?: number } }>({ path });
  const n = replicas ?? d.spec.replicas ?? 1;
  await client.request({
    method: 'PATCH',
    path: `${path}/status`,
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        observedGeneration: d.metadata.generation,
        replicas: n,
        updatedReplicas: n,
        readyReplicas: n,
        availableReplicas: n,
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'played by the test' },
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'played by the test' },
        ],
      },
    },
  });
}

/** Writes what a job controller writes once the Job's pod succeeded (`Complete`), or failed past its backoff limit (`Failed`). */
export async function finishJob(client: Requester, namespace: string, name: string, outcome: 'Complete' | 'Failed'): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const at = { lastTransitionTime: now, lastProbeTime: now };
  const status =
    outcome === 'Complete'
      ? { startTime: now, completionTime: now, succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True', ...at }, { type: 'Complete', status: 'True', ...at }] }
      : {
          startTime: now,
          failed: 1,
          conditions: [
            { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', ...at },
            { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', ...at },
          ],
        };
  await client.request({ method: 'PATCH', path: `/apis/batch/v1/namespaces/${namespace}/jobs/${name}/status`, contentType: 'application/merge-patch+json', body: { status } });
}
