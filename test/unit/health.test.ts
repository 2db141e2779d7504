import { describe, expect, test } from '@jest/globals';
import { computeHealth, kindKey, MAX_HEALTH_MESSAGE, type HealthStatus } from '../../src/apply/health.js';
import type { KubeObject } from '../../src/kube/resources.js';

// Objects as the API server returns them after the controllers and the kubelet wrote status.

type Fields = Record<string, unknown>;

function obj(apiVersion: string, kind: string, name: string, fields: Fields = {}, metadata: Fields = {}): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: { name, namespace: 'team-a', uid: '5b0c1a9e', resourceVersion: '4711', ...metadata },
    ...fields,
  };
}

function cond(type: string, status: string, reason: string, message = ''): Fields {
  return { type, status, reason, message, lastTransitionTime: '2025-06-01T10:00:00Z' };
}

interface Case {
  title: string;
  object: KubeObject;
  status: HealthStatus;
  message: string;
  now?: number;
}

function check(c: Case): void {
  expect(computeHealth(c.object, c.now)).toEqual({ status: c.status, message: c.message });
}

// ------------------------------------------------------------------------------------- Deployment

const deploymentSpec = {
  replicas: 3,
  progressDeadlineSeconds: 600,
  revisionHistoryLimit: 10,
  selector: { matchLabels: { app: 'web' } },
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
};
const available = cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.');
const unavailable = cond('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.');
const rsAvailable = cond('Progressing', 'True', 'NewReplicaSetAvailable', 'ReplicaSet "web-7d9c6b5f4" has successfully progressed.');
const rsUpdated = cond('Progressing', 'True', 'ReplicaSetUpdated', 'ReplicaSet "web-7d9c6b5f4" is progressing.');

function deployment(status: Fields | undefined, spec: Fields = {}, generation = 2): KubeObject {
  const fields: Fields = { spec: { ...deploymentSpec, ...spec } };
  if (status) fields.status = status;
  return obj('apps/v1', 'Deployment', 'web', fields, { generation });
}

const deploymentCases: Case[] = [
  {
    title: 'rolled out and available',
    object: deployment({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [available, rsAvailable],
    }),
    status: 'Current',
    message: 'Deployment web: 3 replicas available',
  },
  {
    title: 'just created, no status yet',
    object: deployment(undefined, { replicas: 2 }, 1),
    status: 'InProgress',
    message: 'Deployment web: 0 of 2 replicas created',
  },
  {
    title: 'pods created, none available',
    object: deployment(
      {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        unavailableReplicas: 2,
        conditions: [unavailable, rsUpdated],
      },
      { replicas: 2 },
      1,
    ),
    status: 'InProgress',
    message: 'Deployment web: 0 of 2 replicas available',
  },
  {
    title: 'rolling update: one new pod, three old',
    object: deployment({
      observedGeneration: 2,
      replicas: 4,
      updatedReplicas: 1,
      readyReplicas: 3,
      availableReplicas: 3,
      unavailableReplicas: 1,
      conditions: [available, rsUpdated],
    }),
    status: 'InProgress',
    message: 'Deployment web: 1 of 3 replicas updated',
  },
  {
    title: 'rolling update: old pod still terminating',
    object: deployment({
      observedGeneration: 2,
      replicas: 4,
      updatedReplicas: 3,
      readyReplicas: 4,
      availableReplicas: 4,
      conditions: [available, rsUpdated],
    }),
    status: 'InProgress',
    message: 'Deployment web: 1 old replica pending termination',
  },
  {
    title: 'available but one pod not ready (minReadySeconds counted the other way)',
    object: deployment({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 3,
      conditions: [available, rsUpdated],
    }),
    status: 'InProgress',
    message: 'Deployment web: 2 of 3 replicas ready',
  },
  {
    title: 'counts complete, controller has not written NewReplicaSetAvailable yet',
    object: deployment({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [available, rsUpdated],
    }),
    status: 'InProgress',
    message: 'Deployment web: new ReplicaSet not available yet',
  },
  {
    title: 'counts complete, Available=False',
    object: deployment({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [unavailable, rsAvailable],
    }),
    status: 'InProgress',
    message: 'Deployment web: not Available (minimum replicas unavailable)',
  },
  {
    title: 'progress deadline exceeded',
    object: deployment({
      observedGeneration: 2,
      replicas: 4,
      updatedReplicas: 1,
      readyReplicas: 3,
      availableReplicas: 3,
      unavailableReplicas: 1,
      conditions: [
        available,
        cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-5d8f7c9b6" has timed out progressing.'),
      ],
    }),
    status: 'Failed',
    message: 'Deployment web: progress deadline exceeded: ReplicaSet "web-5d8f7c9b6" has timed out progressing.',
  },
  {
    title: 'a new generation hides an old ProgressDeadlineExceeded',
    object: deployment(
      {
        observedGeneration: 2,
        replicas: 3,
        conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'timed out')],
      },
      {},
      3,
    ),
    status: 'InProgress',
    message: 'Deployment web: generation 3 not observed yet (observed 2)',
  },
  {
    title: 'generation ahead of observedGeneration',
    object: deployment(
      {
        observedGeneration: 2,
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        conditions: [available, rsAvailable],
      },
      {},
      3,
    ),
    status: 'InProgress',
    message: 'Deployment web: generation 3 not observed yet (observed 2)',
  },
  {
    title: 'scaled to zero',
    object: deployment({ observedGeneration: 2, conditions: [available, rsAvailable] }, { replicas: 0 }),
    status: 'Current',
    message: 'Deployment web: 0 replicas available',
  },
  {
    title: 'spec.replicas missing means 1',
    object: deployment(
      { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [available, rsAvailable] },
      { replicas: undefined },
    ),
    status: 'Current',
    message: 'Deployment web: 1 replica available',
  },
  {
    title: 'without progressDeadlineSeconds the Progressing condition is not needed',
    object: deployment(
      { observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: [available] },
      { progressDeadlineSeconds: undefined },
    ),
    status: 'Current',
    message: 'Deployment web: 3 replicas available',
  },
  {
    title: 'fields of the wrong type count as missing',
    object: deployment({ observedGeneration: 2, replicas: '3', updatedReplicas: null, conditions: 'Available' }),
    status: 'InProgress',
    message: 'Deployment web: 0 of 3 replicas created',
  },
];

// ------------------------------------------------------------------------------------ StatefulSet

function statefulSet(status: Fields, strategy: Fields = { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }): KubeObject {
  return obj(
    'apps/v1',
    'StatefulSet',
    'db',
    {
      spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, updateStrategy: strategy },
      status: { observedGeneration: 2, collisionCount: 0, ...status },
    },
    { generation: 2 },
  );
}
const stsDone = {
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 3,
  updatedReplicas: 3,
  availableReplicas: 3,
  currentRevision: 'db-6b8f9d7c5',
  updateRevision: 'db-6b8f9d7c5',
};
const noPartition = { type: 'RollingUpdate' };

const statefulSetCases: Case[] = [
  {
    title: 'all replicas ready (partition 0, as the API server defaults it)',
    object: statefulSet(stsDone),
    status: 'Current',
    message: 'StatefulSet db: partitioned rollout complete: 3 replicas updated',
  },
  {
    title: 'all replicas ready, no partition',
    object: statefulSet(stsDone, noPartition),
    status: 'Current',
    message: 'StatefulSet db: 3 replicas ready',
  },
  {
    title: 'pods still being created',
    object: statefulSet({ ...stsDone, replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1 }),
    status: 'InProgress',
    message: 'StatefulSet db: 1 of 3 replicas created',
  },
  {
    title: 'pods created, not all ready',
    object: statefulSet({ ...stsDone, readyReplicas: 2 }),
    status: 'InProgress',
    message: 'StatefulSet db: 2 of 3 replicas ready',
  },
  {
    title: 'scaled down, a pod still terminating',
    object: statefulSet({ ...stsDone, replicas: 4, readyReplicas: 4 }),
    status: 'InProgress',
    message: 'StatefulSet db: 1 replica pending termination',
  },
  {
    title: 'rolling update halfway (no partition)',
    object: statefulSet(
      { ...stsDone, currentReplicas: 2, updatedReplicas: 1, updateRevision: 'db-7c9d8e6f4' },
      noPartition,
    ),
    status: 'InProgress',
    message: 'StatefulSet db: 2 of 3 replicas at the current revision',
  },
  {
    title: 'revisions differ',
    object: statefulSet({ ...stsDone, updateRevision: 'db-7c9d8e6f4' }, noPartition),
    status: 'InProgress',
    message: 'StatefulSet db: rolling out revision db-7c9d8e6f4 (current db-6b8f9d7c5)',
  },
  {
    title: 'partition 2: one pod to update, not yet',
    object: statefulSet(
      { ...stsDone, updatedReplicas: 0, updateRevision: 'db-7c9d8e6f4' },
      { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
    ),
    status: 'InProgress',
    message: 'StatefulSet db: 0 of 1 replicas updated (partition 2)',
  },
  {
    title: 'partition 2: the one pod updated',
    object: statefulSet(
      { ...stsDone, currentReplicas: 2, updatedReplicas: 1, updateRevision: 'db-7c9d8e6f4' },
      { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
    ),
    status: 'Current',
    message: 'StatefulSet db: partitioned rollout complete: 1 replica updated',
  },
  {
    title: 'OnDelete is user managed',
    object: statefulSet({ replicas: 3, readyReplicas: 0 }, { type: 'OnDelete' }),
    status: 'Current',
    message: 'StatefulSet db: OnDelete update strategy (user managed)',
  },
  {
    title: 'no status at all',
    object: obj('apps/v1', 'StatefulSet', 'db', { spec: { replicas: 1 } }, { generation: 1 }),
    status: 'InProgress',
    message: 'StatefulSet db: 0 of 1 replicas created',
  },
];

// -------------------------------------------------------------------------------------- DaemonSet

function daemonSet(status: Fields | undefined, generation = 1): KubeObject {
  const fields: Fields = { spec: { selector: { matchLabels: { app: 'agent' } } } };
  if (status) fields.status = status;
  return obj('apps/v1', 'DaemonSet', 'agent', fields, { generation });
}
const dsDone = {
  observedGeneration: 1,
  desiredNumberScheduled: 3,
  currentNumberScheduled: 3,
  updatedNumberScheduled: 3,
  numberAvailable: 3,
  numberReady: 3,
  numberMisscheduled: 0,
};

const daemonSetCases: Case[] = [
  { title: 'a ready pod on every node', object: daemonSet(dsDone), status: 'Current', message: 'DaemonSet agent: 3 pods ready' },
  {
    title: 'not observed by its controller',
    object: daemonSet(undefined),
    status: 'InProgress',
    message: 'DaemonSet agent: not observed by its controller yet',
  },
  {
    title: 'observed, desiredNumberScheduled missing',
    object: daemonSet({ observedGeneration: 1 }),
    status: 'InProgress',
    message: 'DaemonSet agent: status.desiredNumberScheduled not set yet',
  },
  {
    title: 'not scheduled on every node',
    object: daemonSet({ ...dsDone, currentNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 2, numberReady: 2 }),
    status: 'InProgress',
    message: 'DaemonSet agent: 2 of 3 pods scheduled',
  },
  {
    title: 'rolling update',
    object: daemonSet({ ...dsDone, updatedNumberScheduled: 1, numberUnavailable: 1 }),
    status: 'InProgress',
    message: 'DaemonSet agent: 1 of 3 pods updated',
  },
  {
    title: 'updated, one not available',
    object: daemonSet({ ...dsDone, numberAvailable: 2 }),
    status: 'InProgress',
    message: 'DaemonSet agent: 2 of 3 pods available',
  },
  {
    title: 'available but not ready',
    object: daemonSet({ ...dsDone, numberReady: 2 }),
    status: 'InProgress',
    message: 'DaemonSet agent: 2 of 3 pods ready',
  },
  {
    title: 'no eligible nodes',
    object: daemonSet({ observedGeneration: 1, desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 }),
    status: 'Current',
    message: 'DaemonSet agent: 0 pods ready',
  },
  {
    title: 'generation ahead',
    object: daemonSet(dsDone, 2),
    status: 'InProgress',
    message: 'DaemonSet agent: generation 2 not observed yet (observed 1)',
  },
];

// ------------------------------------------------------------------------------------- ReplicaSet

function replicaSet(status: Fields, replicas: number | undefined = 2): KubeObject {
  return obj('apps/v1', 'ReplicaSet', 'web-7d9c6b5f4', { spec: { replicas }, status: { observedGeneration: 1, ...status } }, { generation: 1 });
}
const rsDone = { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

const replicaSetCases: Case[] = [
  { title: 'all available', object: replicaSet(rsDone), status: 'Current', message: 'ReplicaSet web-7d9c6b5f4: 2 replicas available' },
  {
    title: 'quota exceeded (ReplicaFailure is a wait in kstatus)',
    object: replicaSet({
      replicas: 1,
      fullyLabeledReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [
        cond(
          'ReplicaFailure',
          'True',
          'FailedCreate',
          'pods "web-7d9c6b5f4-x2v9q" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=4, limited: pods=4',
        ),
      ],
    }),
    status: 'InProgress',
    message:
      'ReplicaSet web-7d9c6b5f4: replica failure: pods "web-7d9c6b5f4-x2v9q" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=4, limited: pods=4',
  },
  {
    title: 'labels not yet on every pod',
    object: replicaSet({ ...rsDone, fullyLabeledReplicas: 1 }),
    status: 'InProgress',
    message: 'ReplicaSet web-7d9c6b5f4: 1 of 2 replicas labelled',
  },
  {
    title: 'ready, not yet available (minReadySeconds)',
    object: replicaSet({ ...rsDone, availableReplicas: 0 }),
    status: 'InProgress',
    message: 'ReplicaSet web-7d9c6b5f4: 0 of 2 replicas available',
  },
  {
    title: 'a pod not ready',
    object: replicaSet({ ...rsDone, readyReplicas: 1 }),
    status: 'InProgress',
    message: 'ReplicaSet web-7d9c6b5f4: 1 of 2 replicas ready',
  },
  {
    title: 'scaled down, extra pod terminating',
    object: replicaSet({ ...rsDone, replicas: 3 }),
    status: 'InProgress',
    message: 'ReplicaSet web-7d9c6b5f4: 1 replica pending termination',
  },
  { title: 'scaled to zero', object: replicaSet({ replicas: 0 }, 0), status: 'Current', message: 'ReplicaSet web-7d9c6b5f4: 0 replicas available' },
];

// -------------------------------------------------------------------------------------------- Job

function job(status: Fields | undefined, spec: Fields = {}): KubeObject {
  const fields: Fields = { spec: { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, ...spec } };
  if (status) fields.status = status;
  return obj('batch/v1', 'Job', 'migrate', fields, { generation: 1 });
}
const started = { startTime: '2025-06-01T10:00:00Z', terminating: 0, uncountedTerminatedPods: {} };

const jobCases: Case[] = [
  { title: 'not started', object: job(undefined), status: 'InProgress', message: 'Job migrate: not started' },
  {
    title: 'running (kstatus says Current; we wait for completion as Flux does)',
    object: job({ ...started, active: 1, ready: 0 }),
    status: 'InProgress',
    message: 'Job migrate: running: 0 of 1 succeeded, 1 active, 0 failed',
  },
  {
    title: 'running with retries, parallel',
    object: job({ ...started, active: 2, succeeded: 3, failed: 1, ready: 2 }, { completions: 5, parallelism: 2 }),
    status: 'InProgress',
    message: 'Job migrate: running: 3 of 5 succeeded, 2 active, 1 failed',
  },
  {
    title: 'complete',
    object: job({
      ...started,
      completionTime: '2025-06-01T10:00:42Z',
      succeeded: 1,
      ready: 0,
      conditions: [
        cond('SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'),
        cond('Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'),
      ],
    }),
    status: 'Current',
    message: 'Job migrate: complete: 1 of 1 succeeded',
  },
  {
    title: 'completions default to parallelism',
    object: job(
      { ...started, succeeded: 3, conditions: [cond('Complete', 'True', 'CompletionsReached')] },
      { completions: undefined, parallelism: 3 },
    ),
    status: 'Current',
    message: 'Job migrate: complete: 3 of 3 succeeded',
  },
  {
    title: 'SuccessCriteriaMet alone is not complete yet',
    object: job({ ...started, succeeded: 1, active: 0, conditions: [cond('SuccessCriteriaMet', 'True', 'CompletionsReached')] }),
    status: 'InProgress',
    message: 'Job migrate: running: 1 of 1 succeeded, 0 active, 0 failed',
  },
  {
    title: 'backoff limit exceeded',
    object: job({
      ...started,
      failed: 7,
      ready: 0,
      conditions: [
        cond('FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
        cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    }),
    status: 'Failed',
    message: 'Job migrate: failed: Job has reached the specified backoff limit (7 pods failed)',
  },
  {
    title: 'suspended (kstatus says Current; it has not done its work)',
    object: job({ conditions: [cond('Suspended', 'True', 'JobSuspended', 'Job suspended')] }, { suspend: true }),
    status: 'InProgress',
    message: 'Job migrate: suspended',
  },
  {
    title: 'resumed after a suspension',
    object: job({ ...started, active: 1, conditions: [cond('Suspended', 'False', 'JobResumed', 'Job resumed')] }),
    status: 'InProgress',
    message: 'Job migrate: running: 0 of 1 succeeded, 1 active, 0 failed',
  },
];

// -------------------------------------------------------------------------------------------- Pod

const created = Date.parse('2025-06-01T10:00:00Z');

function pod(status: Fields | undefined): KubeObject {
  const fields: Fields = { spec: { containers: [{ name: 'app', image: 'ghcr.io/example/web:1.4.2' }], restartPolicy: 'Always' } };
  if (status) fields.status = status;
  return obj('v1', 'Pod', 'web-0', fields, { creationTimestamp: '2025-06-01T10:00:00Z' });
}
const podBase = { hostIP: '10.0.0.12', podIP: '10.244.1.7', qosClass: 'BestEffort', startTime: '2025-06-01T10:00:01Z' };
const runningApp = {
  name: 'app',
  image: 'ghcr.io/example/web:1.4.2',
  imageID: 'ghcr.io/example/web@sha256:0f1e2d',
  containerID: 'containerd://9a8b7c',
  ready: true,
  started: true,
  restartCount: 0,
  state: { running: { startedAt: '2025-06-01T10:00:03Z' } },
};
const readyConditions = [
  cond('PodReadyToStartContainers', 'True', ''),
  cond('Initialized', 'True', ''),
  cond('Ready', 'True', ''),
  cond('ContainersReady', 'True', ''),
  cond('PodScheduled', 'True', ''),
];
const notReadyConditions = [
  cond('Initialized', 'True', ''),
  cond('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [app]'),
  cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unready status: [app]'),
  cond('PodScheduled', 'True', ''),
];
const unschedulable = {
  phase: 'Pending',
  qosClass: 'Burstable',
  conditions: [
    cond('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.'),
  ],
};

const podCases: Case[] = [
  {
    title: 'running and ready',
    object: pod({ ...podBase, phase: 'Running', conditions: readyConditions, containerStatuses: [runningApp] }),
    status: 'Current',
    message: 'Pod web-0: ready',
  },
  {
    title: 'running, readiness probe not passing yet',
    object: pod({ ...podBase, phase: 'Running', conditions: notReadyConditions, containerStatuses: [{ ...runningApp, ready: false }] }),
    status: 'InProgress',
    message: 'Pod web-0: running, not ready',
  },
  {
    title: 'crash looping',
    object: pod({
      ...podBase,
      phase: 'Running',
      conditions: notReadyConditions,
      containerStatuses: [
        { ...runningApp, name: 'sidecar' },
        {
          ...runningApp,
          ready: false,
          started: false,
          restartCount: 5,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s restarting failed container=app pod=web-0_team-a(5b0c1a9e)' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: '2025-06-01T10:04:00Z', finishedAt: '2025-06-01T10:04:01Z' } },
        },
      ],
    }),
    status: 'Failed',
    message: 'Pod web-0: CrashLoopBackOff: app',
  },
  {
    title: 'pending: creating containers',
    object: pod({
      ...podBase,
      phase: 'Pending',
      conditions: [cond('PodScheduled', 'True', ''), cond('Ready', 'False', 'ContainersNotReady')],
      containerStatuses: [{ ...runningApp, ready: false, started: false, state: { waiting: { reason: 'ContainerCreating' } } }],
    }),
    status: 'InProgress',
    message: 'Pod web-0: pending',
  },
  {
    title: 'unschedulable for 5 s: given time',
    object: pod(unschedulable),
    now: created + 5_000,
    status: 'InProgress',
    message: 'Pod web-0: not scheduled yet',
  },
  {
    title: 'unschedulable for a minute',
    object: pod(unschedulable),
    now: created + 60_000,
    status: 'Failed',
    message:
      'Pod web-0: unschedulable: 0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
  },
  {
    title: 'succeeded',
    object: pod({ ...podBase, phase: 'Succeeded', containerStatuses: [{ ...runningApp, ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }),
    status: 'Current',
    message: 'Pod web-0: succeeded',
  },
  {
    title: 'failed container (restartPolicy Never)',
    object: pod({
      ...podBase,
      phase: 'Failed',
      containerStatuses: [{ ...runningApp, ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }],
    }),
    status: 'Failed',
    message: 'Pod web-0: failed: container app exited with code 137 (OOMKilled)',
  },
  {
    title: 'evicted',
    object: pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 58Mi.' }),
    status: 'Failed',
    message: 'Pod web-0: failed: The node was low on resource: memory. Threshold quantity: 100Mi, available: 58Mi.',
  },
  { title: 'no phase yet', object: pod(undefined), status: 'InProgress', message: 'Pod web-0: no phase yet' },
  { title: 'node lost (phase Unknown)', object: pod({ phase: 'Unknown' }), status: 'Unknown', message: 'Pod web-0: phase Unknown' },
];

// ----------------------------------------------------------------------------- PVC, Service, Namespace

function pvc(status: Fields | undefined): KubeObject {
  const fields: Fields = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' } };
  if (status) fields.status = status;
  return obj('v1', 'PersistentVolumeClaim', 'data', fields);
}

const pvcCases: Case[] = [
  {
    title: 'bound',
    object: pvc({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } }),
    status: 'Current',
    message: 'PersistentVolumeClaim data: bound',
  },
  { title: 'pending', object: pvc({ phase: 'Pending' }), status: 'InProgress', message: 'PersistentVolumeClaim data: not bound (phase Pending)' },
  { title: 'no status', object: pvc(undefined), status: 'InProgress', message: 'PersistentVolumeClaim data: not bound (phase unknown)' },
  { title: 'lost its volume', object: pvc({ phase: 'Lost' }), status: 'Failed', message: 'PersistentVolumeClaim data: lost its volume' },
];

function service(spec: Fields, status: Fields = { loadBalancer: {} }): KubeObject {
  return obj('v1', 'Service', 'web', {
    spec: { clusterIP: '10.96.12.34', clusterIPs: ['10.96.12.34'], ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], ...spec },
    status,
  });
}

const serviceCases: Case[] = [
  { title: 'ClusterIP', object: service({ type: 'ClusterIP' }), status: 'Current', message: 'Service web: ready' },
  { title: 'headless', object: service({ type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] }), status: 'Current', message: 'Service web: ready' },
  { title: 'NodePort', object: service({ type: 'NodePort' }), status: 'Current', message: 'Service web: ready' },
  {
    title: 'ExternalName',
    object: service({ type: 'ExternalName', externalName: 'db.example.com', clusterIP: undefined, clusterIPs: undefined }),
    status: 'Current',
    message: 'Service web: ready',
  },
  {
    title: 'LoadBalancer waiting for an address',
    object: service({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: true }),
    status: 'InProgress',
    message: 'Service web: waiting for a load balancer address',
  },
  {
    title: 'LoadBalancer with an IP',
    object: service({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '203.0.113.10', ipMode: 'VIP' }] } }),
    status: 'Current',
    message: 'Service web: load balancer 203.0.113.10',
  },
  {
    title: 'LoadBalancer with a hostname',
    object: service({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ hostname: 'a1b2.elb.eu-west-1.amazonaws.com' }] } }),
    status: 'Current',
    message: 'Service web: load balancer a1b2.elb.eu-west-1.amazonaws.com',
  },
  {
    title: 'LoadBalancer with an empty ingress entry',
    object: service({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{}] } }),
    status: 'InProgress',
    message: 'Service web: waiting for a load balancer address',
  },
  {
    title: 'LoadBalancer with external IPs does not wait',
    object: service({ type: 'LoadBalancer', externalIPs: ['198.51.100.7'] }),
    status: 'Current',
    message: 'Service web: external IPs 198.51.100.7',
  },
  {
    title: 'LoadBalancer without a cluster IP',
    object: service({ type: 'LoadBalancer', clusterIP: undefined }),
    status: 'InProgress',
    message: 'Service web: no cluster IP yet',
  },
];

function namespace(status: Fields | undefined, metadata: Fields = {}): KubeObject {
  const ns = obj('v1', 'Namespace', 'team-b', status ? { spec: { finalizers: ['kubernetes'] }, status } : {}, metadata);
  delete ns.metadata.namespace;
  return ns;
}

const namespaceCases: Case[] = [
  { title: 'active', object: namespace({ phase: 'Active' }), status: 'Current', message: 'Namespace team-b: active' },
  { title: 'no status', object: namespace(undefined), status: 'Current', message: 'Namespace team-b: active' },
  {
    title: 'terminating, with deletionTimestamp',
    object: namespace(
      {
        phase: 'Terminating',
        conditions: [cond('NamespaceContentRemaining', 'True', 'SomeResourcesRemain', 'Some resources are remaining: pods. has 2 resource instances')],
      },
      { deletionTimestamp: '2025-06-01T11:00:00Z' },
    ),
    status: 'Terminating',
    message: 'Namespace team-b: being deleted',
  },
  { title: 'terminating phase alone', object: namespace({ phase: 'Terminating' }), status: 'Terminating', message: 'Namespace team-b: terminating' },
];

// ------------------------------------------------------------------------------------- PDB and CRD

function pdb(status: Fields | undefined, generation = 1): KubeObject {
  const fields: Fields = { spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } };
  if (status) fields.status = status;
  return obj('policy/v1', 'PodDisruptionBudget', 'web', fields, { generation });
}

const pdbCases: Case[] = [
  {
    title: 'enough healthy pods',
    object: pdb({
      observedGeneration: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
      expectedPods: 3,
      conditions: [{ ...cond('DisruptionAllowed', 'True', 'SufficientPods'), observedGeneration: 1 }],
    }),
    status: 'Current',
    message: 'PodDisruptionBudget web: 3 healthy pods, 1 disruption allowed',
  },
  {
    title: 'too few healthy pods',
    object: pdb({
      observedGeneration: 1,
      currentHealthy: 1,
      desiredHealthy: 2,
      disruptionsAllowed: 0,
      expectedPods: 3,
      conditions: [cond('DisruptionAllowed', 'False', 'InsufficientPods')],
    }),
    status: 'InProgress',
    message: 'PodDisruptionBudget web: 1 of 2 healthy pods',
  },
  {
    title: 'exactly enough, no disruption allowed',
    object: pdb({ observedGeneration: 1, currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0, expectedPods: 2 }),
    status: 'Current',
    message: 'PodDisruptionBudget web: 2 healthy pods, 0 disruptions allowed',
  },
  {
    title: 'not observed by the disruption controller',
    object: pdb(undefined),
    status: 'InProgress',
    message: 'PodDisruptionBudget web: not observed by its controller yet',
  },
  {
    title: 'controller could not compute it',
    object: pdb({
      observedGeneration: 1,
      conditions: [cond('DisruptionAllowed', 'False', 'SyncFailed', 'found no controllers for pod "web-0"')],
    }),
    status: 'InProgress',
    message: 'PodDisruptionBudget web: sync failed: found no controllers for pod "web-0"',
  },
  {
    title: 'generation ahead',
    object: pdb({ observedGeneration: 1, currentHealthy: 3, desiredHealthy: 2 }, 2),
    status: 'InProgress',
    message: 'PodDisruptionBudget web: generation 2 not observed yet (observed 1)',
  },
];

function crd(conditions: Fields[] | undefined): KubeObject {
  const fields: Fields = { spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced' } };
  if (conditions) {
    fields.status = { acceptedNames: { kind: 'Widget', plural: 'widgets' }, storedVersions: ['v1'], conditions };
  }
  const object = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com', fields, { generation: 1 });
  delete object.metadata.namespace;
  return object;
}
const namesAccepted = cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found');

const crdCases: Case[] = [
  {
    title: 'established',
    object: crd([namesAccepted, cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted')]),
    status: 'Current',
    message: 'CustomResourceDefinition widgets.example.com: established',
  },
  {
    title: 'installing',
    object: crd([namesAccepted, cond('Established', 'False', 'Installing', 'the initial names have been accepted')]),
    status: 'InProgress',
    message: 'CustomResourceDefinition widgets.example.com: installing',
  },
  { title: 'no status yet', object: crd(undefined), status: 'InProgress', message: 'CustomResourceDefinition widgets.example.com: installing' },
  {
    title: 'names conflict',
    object: crd([
      cond('NamesAccepted', 'False', 'ListKindConflict', '"WidgetList" is already in use'),
      cond('Established', 'False', 'NotAccepted', 'not all names are accepted'),
    ]),
    status: 'Failed',
    message: 'CustomResourceDefinition widgets.example.com: names not accepted: "WidgetList" is already in use',
  },
  {
    title: 'not established for another reason',
    object: crd([namesAccepted, cond('Established', 'False', 'NotAccepted', 'not all names are accepted')]),
    status: 'Failed',
    message: 'CustomResourceDefinition widgets.example.com: not established: not all names are accepted',
  },
];

// --------------------------------------------------------------------------------- our own kinds

function ownKind(kind: string, status: Fields | undefined, generation = 2, apiVersion = 'syncprims.dev/v1alpha1'): KubeObject {
  const fields: Fields = { spec: { source: { inline: [] } } };
  if (status) fields.status = status;
  return obj(apiVersion, kind, 'apps', fields, { generation, finalizers: ['syncprims.dev/finalizer'] });
}
const applied = {
  observedGeneration: 2,
  lastAttemptedRevision: 'sha256:3f4e5d',
  lastAppliedRevision: 'sha256:3f4e5d',
  conditions: [cond('Ready', 'True', 'Succeeded', 'Applied revision sha256:3f4e5d')],
  summary: { total: 2, current: 2, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0, leastStatus: 'Current' },
};

const ownKindCases: Case[] = [
  ...['Sync', 'RemoteSync', 'ProxySync'].map(
    (kind): Case => ({
      title: `${kind}: applied and ready`,
      object: ownKind(kind, applied),
      status: 'Current',
      message: `${kind} apps: Applied revision sha256:3f4e5d`,
    }),
  ),
  {
    title: 'Sync: never reconciled',
    object: ownKind('Sync', undefined, 1),
    status: 'InProgress',
    message: 'Sync apps: not reconciled yet',
  },
  {
    title: 'Sync: generation ahead',
    object: ownKind('Sync', applied, 3),
    status: 'InProgress',
    message: 'Sync apps: generation 3 not observed yet (observed 2)',
  },
  {
    title: 'RemoteSync: applying a new revision',
    object: ownKind('RemoteSync', {
      ...applied,
      lastAttemptedRevision: 'sha256:9a8b7c',
      conditions: [
        cond('Ready', 'Unknown', 'Progressing', 'Applying revision sha256:9a8b7c'),
        cond('Reconciling', 'True', 'Progressing', 'Applying revision sha256:9a8b7c'),
      ],
    }),
    status: 'InProgress',
    message: 'RemoteSync apps: applying revision sha256:9a8b7c',
  },
  {
    title: 'Sync: waiting for a dependency, with the Ready message',
    object: ownKind('Sync', {
      ...applied,
      conditions: [
        cond('Ready', 'False', 'DependencyNotReady', 'dependency Sync team-a/db is not ready'),
        cond('Reconciling', 'True', 'DependencyNotReady', 'waiting for dependencies'),
      ],
    }),
    status: 'InProgress',
    message: 'Sync apps: dependency Sync team-a/db is not ready',
  },
  {
    title: 'ProxySync: health check failed (not stalled: it may recover)',
    object: ownKind('ProxySync', {
      ...applied,
      conditions: [cond('Ready', 'False', 'HealthCheckFailed', 'timed out after 5m waiting for health: Deployment team-a/web (InProgress): 0 of 2 replicas available')],
    }),
    status: 'InProgress',
    message: 'ProxySync apps: timed out after 5m waiting for health: Deployment team-a/web (InProgress): 0 of 2 replicas available',
  },
  {
    title: 'Sync: stalled on an invalid spec',
    object: ownKind('Sync', {
      ...applied,
      conditions: [
        cond('Ready', 'False', 'InvalidSpec', 'spec.source: exactly one of inline, configMap, secret, http, artifact'),
        cond('Stalled', 'True', 'InvalidSpec', 'spec.source: exactly one of inline, configMap, secret, http, artifact'),
      ],
    }),
    status: 'Failed',
    message: 'Sync apps: stalled: spec.source: exactly one of inline, configMap, secret, http, artifact',
  },
  {
    title: 'Sync: applied but no Ready condition',
    object: ownKind('Sync', { ...applied, conditions: [] }),
    status: 'InProgress',
    message: 'Sync apps: no Ready condition yet',
  },
  {
    title: 'Sync: suspended keeps its last Ready',
    object: ownKind('Sync', { ...applied, conditions: [cond('Ready', 'True', 'Suspended', 'suspended')] }),
    status: 'Current',
    message: 'Sync apps: suspended',
  },
  {
    title: 'a Sync of another group follows the generic rules',
    object: ownKind('Sync', { ...applied, lastAppliedRevision: 'old' }, 2, 'example.com/v1'),
    status: 'Current',
    message: 'Sync apps: Applied revision sha256:3f4e5d',
  },
];

// --------------------------------------------------------------------------------- generic rules

function custom(status: Fields | undefined, generation = 4): KubeObject {
  const fields: Fields = { spec: { dnsNames: ['web.example.com'], secretName: 'web-tls' } };
  if (status) fields.status = status;
  return obj('cert-manager.io/v1', 'Certificate', 'web-tls', fields, { generation });
}

const genericCases: Case[] = [
  {
    title: 'ConfigMap: no status at all',
    object: obj('v1', 'ConfigMap', 'settings', { data: { LOG_LEVEL: 'info' } }),
    status: 'Current',
    message: 'ConfigMap settings: current',
  },
  { title: 'Secret', object: obj('v1', 'Secret', 'token', { type: 'Opaque', data: { token: 'czNjcjN0' } }), status: 'Current', message: 'Secret token: current' },
  {
    title: 'CronJob (no conditions)',
    object: obj('batch/v1', 'CronJob', 'nightly', { spec: { schedule: '0 3 * * *' }, status: { lastScheduleTime: '2025-06-01T03:00:00Z' } }, { generation: 1 }),
    status: 'Current',
    message: 'CronJob nightly: current',
  },
  {
    title: 'custom resource: Ready=True',
    object: custom({ observedGeneration: 4, conditions: [{ ...cond('Ready', 'True', 'Ready', 'Certificate is up to date and has not expired'), observedGeneration: 4 }] }),
    status: 'Current',
    message: 'Certificate web-tls: Certificate is up to date and has not expired',
  },
  {
    title: 'custom resource: Ready=False',
    object: custom({ conditions: [cond('Ready', 'False', 'DoesNotExist', 'Issuer letsencrypt not found')] }),
    status: 'InProgress',
    message: 'Certificate web-tls: not ready: Issuer letsencrypt not found',
  },
  {
    title: 'custom resource: Ready=Unknown without a message',
    object: custom({ conditions: [{ type: 'Ready', status: 'Unknown' }] }),
    status: 'InProgress',
    message: 'Certificate web-tls: not ready: Ready=Unknown',
  },
  {
    title: 'custom resource: Ready=False and Stalled=True',
    object: custom({
      conditions: [
        cond('Ready', 'False', 'BuildFailed', 'kustomize build failed: accumulating resources'),
        cond('Stalled', 'True', 'BuildFailed', 'kustomize build failed: accumulating resources'),
      ],
    }),
    status: 'Failed',
    message: 'Certificate web-tls: stalled: kustomize build failed: accumulating resources',
  },
  {
    title: 'custom resource: Reconciling=True',
    object: custom({ conditions: [cond('Reconciling', 'True', 'Progressing', 'Issuing certificate as Secret does not exist')] }),
    status: 'InProgress',
    message: 'Certificate web-tls: reconciling: Issuing certificate as Secret does not exist',
  },
  {
    title: 'custom resource: Stalled wins over Reconciling, whatever the order',
    object: custom({ conditions: [cond('Reconciling', 'True', 'Progressing', 'retrying'), cond('Stalled', 'True', 'Invalid', 'bad spec')] }),
    status: 'Failed',
    message: 'Certificate web-tls: stalled: bad spec',
  },
  {
    title: 'custom resource: Reconciling=False and Stalled=False are normal',
    object: custom({ conditions: [cond('Reconciling', 'False', 'Done'), cond('Stalled', 'False', 'Done')] }),
    status: 'Current',
    message: 'Certificate web-tls: current',
  },
  {
    title: 'custom resource: generation not observed',
    object: custom({ observedGeneration: 3, conditions: [cond('Ready', 'True', 'Ready', 'up to date')] }),
    status: 'InProgress',
    message: 'Certificate web-tls: generation 4 not observed yet (observed 3)',
  },
  {
    title: 'custom resource: conditions of other types only',
    object: custom({ conditions: [cond('Issuing', 'False', 'Done', '')] }),
    status: 'Current',
    message: 'Certificate web-tls: current',
  },
  {
    title: 'a Deployment of another group is not an apps Deployment',
    object: obj('example.com/v1', 'Deployment', 'web', { spec: { replicas: 3 } }, { generation: 1 }),
    status: 'Current',
    message: 'Deployment web: current',
  },
];

describe('computeHealth', () => {
  const tables: [string, Case[]][] = [
    ['Deployment', deploymentCases],
    ['StatefulSet', statefulSetCases],
    ['DaemonSet', daemonSetCases],
    ['ReplicaSet', replicaSetCases],
    ['Job', jobCases],
    ['Pod', podCases],
    ['PersistentVolumeClaim', pvcCases],
    ['Service', serviceCases],
    ['Namespace', namespaceCases],
    ['PodDisruptionBudget', pdbCases],
    ['CustomResourceDefinition', crdCases],
    ['Sync, RemoteSync, ProxySync', ownKindCases],
    ['generic conventions', genericCases],
  ];
  for (const [name, cases] of tables) {
    describe(name, () => {
      test.each(cases.map((c) => [c.title, c] as const))('%s', (_title, c) => check(c));
    });
  }

  test('a missing object is NotFound', () => {
    expect(computeHealth(undefined)).toEqual({ status: 'NotFound', message: 'not found' });
  });

  test.each([
    ['Deployment', deployment({ observedGeneration: 1 }, {}, 2)],
    ['Pod', pod({ phase: 'Running', conditions: readyConditions })],
    ['Sync', ownKind('Sync', applied)],
    ['ConfigMap', obj('v1', 'ConfigMap', 'c')],
  ])('%s with a deletionTimestamp is Terminating', (kind, object) => {
    object.metadata.deletionTimestamp = '2025-06-01T11:00:00Z';
    object.metadata.finalizers = ['example.com/cleanup'];
    expect(computeHealth(object)).toEqual({ status: 'Terminating', message: `${kind} ${object.metadata.name}: being deleted` });
  });

  test('messages stay one short line', () => {
    const long = `first line\n${'x'.repeat(5000)}\n\tlast`;
    const result = computeHealth(custom({ conditions: [cond('Ready', 'False', 'Failing', long)] }));
    expect(result.status).toBe('InProgress');
    expect(result.message).toHaveLength(MAX_HEALTH_MESSAGE);
    expect(result.message.startsWith('Certificate web-tls: not ready: first line xxx')).toBe(true);
    expect(result.message.endsWith('x…')).toBe(true);
    expect(result.message).not.toMatch(/[\n\t]/);
  });

  test('an object without a name is still described', () => {
    const object = obj('v1', 'ConfigMap', '');
    delete object.metadata.name;
    expect(computeHealth(object).message).toBe('ConfigMap (unnamed): current');
  });

  test('the Pod schedule window uses the clock by default', () => {
    const old = pod({ ...unschedulable });
    expect(computeHealth(old).status).toBe('Failed'); // created in 2025, long ago
    const fresh = pod({ ...unschedulable });
    fresh.metadata.creationTimestamp = new Date().toISOString();
    expect(computeHealth(fresh).status).toBe('InProgress');
    // No creationTimestamp (an object built by hand, never stored): kstatus counts from the zero time.
    const undated = pod({ ...unschedulable });
    delete undated.metadata.creationTimestamp;
    expect(computeHealth(undated)).toEqual({ status: 'Failed', message: expect.stringContaining('Pod web-0: unschedulable: 0/3 nodes are available') });
  });

  test('kindKey names the group except for the core group', () => {
    expect(kindKey({ apiVersion: 'v1', kind: 'Pod' })).toBe('Pod');
    expect(kindKey({ apiVersion: 'apps/v1', kind: 'Deployment' })).toBe('apps/Deployment');
    expect(kindKey({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync' })).toBe('syncprims.dev/Sync');
  });
});
