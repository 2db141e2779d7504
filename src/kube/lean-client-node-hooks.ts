// The module resolution hook of lean-client-node.ts (it runs on Node's hooks
// thread): client-node's dist/config.js importing ./gen/index.js gets the shim.
const SHIM = new URL('./client-node-gen-shim.js', import.meta.url).href;

interface ResolveContext {
  parentURL?: string;
}

type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string; shortCircuit?: boolean }> {
  if (specifier === './gen/index.js' && context.parentURL?.endsWith('/@kubernetes/client-node/dist/config.js')) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
