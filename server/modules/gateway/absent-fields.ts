/**
 * A request field sent as `null` — and a free-text one sent as `""` — is a field not sent, as OpenAI reads
 * them: the Python SDK sends `user: None` when a wrapper passes every keyword through, and LlamaIndex's
 * `OpenAIResponses` sends `instructions: ""` and `previous_response_id: None`. The surfaces drop such fields
 * before validation, so what follows (defaults, forwarding) treats them exactly as left out.
 *
 * `null` is absent for every top-level field: where a field is required, leaving it out already gets the
 * refusal (or the default) that field has. `""` is absent only for the free-text fields below; an empty
 * model, id or enum value (`model`, `previous_response_id`, `truncation`, `reasoning_effort`, …) stays a 400,
 * as OpenAI answers it.
 */

/** `POST /v1/responses` fields whose `""` means "none". */
export const responsesEmptyAsAbsent: ReadonlySet<string> = new Set(['instructions', 'user', 'prompt_cache_key', 'safety_identifier']);

/** `POST /v1/chat/completions` (and `/v1/completions`) fields whose `""` means "none". */
export const chatEmptyAsAbsent: ReadonlySet<string> = new Set(['user', 'prompt_cache_key', 'safety_identifier']);

/** Deletes the top-level fields of `body` that are `null`, or `""` where `emptyAsAbsent` names them. */
export function dropAbsentFields(body: unknown, emptyAsAbsent: ReadonlySet<string>): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const fields = body as Record<string, unknown>;
  for (const field in fields) {
    const value = fields[field];
    if (value === null || (value === '' && emptyAsAbsent.has(field))) delete fields[field];
  }
}
