/**
 * JSON with the keys of every object sorted (arrays keep their order), as
 * JSON.stringify writes values otherwise: undefined members are left out.
 * Equal values give equal text, whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** Realm-independent (structuredClone and vm contexts make objects of other realms). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.prototype.toString.call(value) === '[object Object]' &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/** Plain objects get sorted keys (by code unit); anything else (a Date, say) is left for JSON.stringify. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) sorted[key] = sortKeys(value[key]);
  return sorted;
}
