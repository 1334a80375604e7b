const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a client-supplied id can be a row id (so a malformed one is a clean 404, not a database error). */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
