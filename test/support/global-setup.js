import { mkdir, rm, writeFile } from 'node:fs/promises';
import { controlPlaneStatus, LOCAL, STARTED_FILE, SUPERVISOR_FILE } from './controlplane-cli.js';

// Clusters are started lazily by the tests that need them (ensureClusters);
// here we only note what was already running, so teardown leaves it alone.
export default async function globalSetup() {
  await mkdir(LOCAL, { recursive: true });
  await rm(STARTED_FILE, { force: true });
  const status = await controlPlaneStatus();
  await writeFile(SUPERVISOR_FILE, status.running ? 'reused' : 'ours');
}
