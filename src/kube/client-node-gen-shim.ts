// What client-node's dist/config.js imports from its generated API
// (./gen/index.js), without the rest of it: see lean-client-node.ts.
export { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
export { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';
