import { readFileSync } from 'node:fs';
import { KubeConfig } from './kubeconfig.js';

/** Loads a kubeconfig file, with an error that names the file and what is wrong. */
export function loadKubeConfigFile(file: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(err);
    throw new Error(`cannot read kubeconfig ${file}: ${why}`, { cause: err });
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    throw new Error(`kubeconfig ${file} is not valid: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  if (!kc.getCurrentCluster()) {
    throw new Error(`kubeconfig ${file} has no current context with a cluster (set current-context)`);
  }
  return kc;
}
