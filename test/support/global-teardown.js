import { readFile, rm } from 'node:fs/promises';
import { controlplane, controlPlaneStatus, startedByThisRun, STARTED_FILE, SUPERVISOR_FILE } from './controlplane-cli.js';

// Stops what this run started: the whole control plane if the run started it,
// else only the clusters it added to one that was already up.
export default async function globalTeardown() {
  const supervisor = await readFile(SUPERVISOR_FILE, 'utf8').catch(() => 'reused');
  if (process.env.SYNCPRIMS_KEEP_CLUSTERS) {
    console.log('\nSYNCPRIMS_KEEP_CLUSTERS is set: leaving the local clusters running');
  } else if (supervisor === 'ours') {
    await controlplane(['down']);
  } else {
    // A test may have stopped one of its own already (a cluster seen going down): stopping it again would fail.
    const running = new Set((await controlPlaneStatus()).clusters.filter((c) => c.running).map((c) => c.name));
    const started = (await startedByThisRun()).filter((name) => running.has(name));
    if (started.length > 0) await controlplane(['stop', ...started]);
  }
  await rm(STARTED_FILE, { force: true });
  await rm(SUPERVISOR_FILE, { force: true });
}
