// `syncprims build fleetsync/NAME --cluster C` told from the other builds,
// and its flags checked, before anything is loaded or asked (build-fleet.ts
// does the rest).
import { UsageError } from '../errors.js';
import { kindOf, parseSyncRef } from '../kind-name.js';

/** The flags of `build` that a FleetSync's build looks at. */
export interface FleetBuildRequestFlags {
  cluster?: string;
  path?: string;
  url?: string;
  owner?: string;
  defaultNamespace?: string;
  clusterId?: string;
}

/** Whether `text` is `fleetsync/NAME` (in any of the kind's spellings: fsy/NAME, FleetSync/NAME). */
export function isFleetRef(text: string): boolean {
  const slash = text.indexOf('/');
  return slash > 0 && kindOf(text.slice(0, slash)) === 'FleetSync';
}

/** The FleetSync's name, its flags checked: the file, path and URL flags go with the other builds. */
export function fleetBuildRequest(ref: string, flags: FleetBuildRequestFlags): string {
  if (!isFleetRef(ref)) throw new UsageError(`--cluster goes with fleetsync/NAME (the FleetSync whose child to print), not with ${ref}`);
  const { name } = parseSyncRef(ref, ['FleetSync']);
  if (flags.cluster === undefined || flags.cluster === '') throw new UsageError(`build ${ref}: name the cluster whose child to print: --cluster NAME (syncprims get clusters -n NS lists them)`);
  const extra = (['path', 'url', 'owner', 'defaultNamespace', 'clusterId'] as const).filter((f) => flags[f] !== undefined);
  if (extra.length > 0) throw new UsageError(`build ${ref}: ${extra.map((f) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} go with a file, --path or --url, not with a FleetSync`);
  return name;
}
