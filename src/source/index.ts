// Fetching and parsing a sync's source (API.md "The sync spec", "Source limits").
export { SourceError, VerificationError } from './errors.js';
export { DEFAULT_SOURCE_LIMITS, setSourceLimits, SOURCE_LIMIT_FLAGS, sourceLimits, type SourceLimits } from './limits.js';
export { parseManifests, checkObjects, type ParseOptions } from './parse.js';
export { extractTarGz, type ArchiveFiles, type ArchiveLimits } from './archive.js';
export { selectManifests, selectSource, type ManifestFile, type SelectedSource } from './select.js';
export { buildKustomizations, helperPath as kustomizeHelperPath, KUSTOMIZE_TIME_LIMIT_MS } from './kustomize.js';
export { digestOf, displayUrl, verifyDigest } from './http.js';
export type { ObjectRef, SourceReader } from './kube-refs.js';
export { fetchSource, isArchive, referencedObjectsOf, sourceSecretsOf, type FetchSourceOptions, type FetchedSource } from './fetch.js';
export { ByteBudget, DEFAULT_SOURCE_MEMORY_BUDGET, setSourceMemoryBudget, sourceMemoryBudget, type BudgetLease } from './budget.js';
export { fetchChart, chartFolder, chartKey, type ChartSourceOptions, type FetchedChart, type GivenChartFiles } from './chart-source.js';
export { readValuesLayers, helmNamespace, chartRevision, DEFAULT_VALUES_KEY, type RevisionInput, type ValuesReader } from './chart-values.js';
export { fetchChartSet, type ChartSetOptions, type FetchedChartSet, type FetchedHook, type GivenChart } from './chart-set.js';
export { renderChart, helmHelperPath, HELM_TIME_LIMIT_MS, type ChartRenderRequest, type ChartRenderOptions, type RenderedChart, type ValuesLayer } from './helm.js';
export { repositoryCache, repositoryTree, resolveRepositorySource, displayRepositoryUrl, type RepositoryContext, type RepositorySource, type RepositoryTree } from './repository.js';
export { RepositoryCache, repositoryIdentity } from './repository-cache.js';
export type { Resolution } from './fetch-helper.js';
