/** Deep merge of plain objects (config layers: YAML, environment, test overrides). Arrays and scalars replace. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function mergeDeep<T = unknown>(base: unknown, extra: unknown): T {
  if (!isObject(base) || !isObject(extra)) return (extra === undefined ? base : extra) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) out[key] = key in out ? mergeDeep(out[key], value) : value;
  return out as T;
}
