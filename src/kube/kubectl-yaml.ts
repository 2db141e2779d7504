import type { DocumentOptions, ParseOptions, SchemaOptions, Tags } from 'yaml';

/** kubectl's YAML (go-yaml v2) leaves timestamps and sexagesimal numbers (`1:20`) as strings. */
function kubectlTags(tags: Tags): Tags {
  return tags.filter((t) => typeof t === 'string' || (!t.tag.endsWith(':timestamp') && t.format !== 'TIME'));
}

/**
 * YAML as kubectl reads it: 1.1 (`yes` is true, `0644` octal) without
 * timestamps or sexagesimal numbers; the library's warnings (which quote the
 * content) are not printed.
 */
export const KUBECTL_YAML: ParseOptions & DocumentOptions & SchemaOptions = { version: '1.1', customTags: kubectlTags, logLevel: 'error' };
