/**
 * A `POST /v1/embeddings` request as OpenAI defines it, checked: `model`, `input` (a string, an array of
 * strings, an array of token ids or an array of such arrays — at most `maxInputs` of them, none empty),
 * `encoding_format` (`float`, the default, or `base64`), `dimensions` and `user`. Any other field is the
 * model server's (`input_type`, `truncate_prompt_tokens`, …) and is forwarded as sent, subject to the
 * upstream's `forwardFields` policy, as chat forwards the fields it does not own.
 */
import { AppError } from '../../errors/app-error.ts';

/** Inputs per request, as OpenAI allows. */
export const maxInputs = 2048;

/** Tokens a model server may add to each input (BOS/EOS, [CLS]/[SEP]): within the reservation's bound. */
const specialTokensPerInput = 8;

const OWNED = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

export interface EmbeddingRequest {
  model: string;
  /** The input as sent: forwarded as it is. */
  input: string | string[] | number[] | number[][];
  /** Each input: its text, or its token ids. */
  inputs: (string | number[])[];
  encoding: 'float' | 'base64';
  dimensions: number | undefined;
  /** The fields svc does not own, forwarded per the upstream's policy. */
  extra: Record<string, unknown>;
  /** The most input tokens the inputs can be: a token is at least one byte (or one id), plus the special ones. */
  tokenBound: number;
}

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

export function parseEmbeddingRequest(raw: unknown): EmbeddingRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
  const body = raw as Record<string, unknown>;
  if (typeof body.model !== 'string' || body.model === '') throw invalid('model', 'model is required: an embedding model id (GET /v1/models lists them).');
  const inputs = inputsOf(body.input);
  const encoding = body.encoding_format ?? 'float';
  if (encoding !== 'float' && encoding !== 'base64') throw invalid('encoding_format', 'encoding_format must be float or base64.');
  const dimensions = body.dimensions ?? undefined;
  if (dimensions !== undefined && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536)) {
    throw invalid('dimensions', 'dimensions must be a whole number from 1 to 65536.');
  }
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') throw invalid('user', 'user must be a string.');
  const extra: Record<string, unknown> = {};
  for (const field in body) if (!OWNED.has(field) && body[field] !== undefined && body[field] !== null) extra[field] = body[field];
  let tokenBound = 0;
  for (const input of inputs) tokenBound += (typeof input === 'string' ? Buffer.byteLength(input) : input.length) + specialTokensPerInput;
  return { model: body.model, input: body.input as EmbeddingRequest['input'], inputs, encoding, dimensions, extra, tokenBound };
}

/** The inputs of `input`, each a non-empty string or a non-empty array of token ids. */
function inputsOf(input: unknown): (string | number[])[] {
  const shape = 'input must be a string, an array of strings, an array of token ids, or an array of arrays of token ids.';
  if (typeof input === 'string') {
    if (input === '') throw invalid('input', 'input must not be empty.');
    return [input];
  }
  if (!Array.isArray(input)) throw invalid('input', input === undefined || input === null ? `input is required: ${shape}` : shape);
  if (input.length === 0) throw invalid('input', 'input must not be an empty array.');
  if (input.every((item) => typeof item === 'number')) return [tokenIds(input, 'input')];
  if (input.length > maxInputs) throw invalid('input', `input may hold at most ${maxInputs} items; split it into several requests.`);
  return input.map((item: unknown, i) => {
    if (typeof item === 'string') {
      if (item === '') throw invalid(`input[${i}]`, 'An input must not be an empty string.');
      return item;
    }
    if (Array.isArray(item)) return tokenIds(item, `input[${i}]`);
    throw invalid(`input[${i}]`, shape);
  });
}

function tokenIds(ids: unknown[], at: string): number[] {
  if (ids.length === 0) throw invalid(at, 'An array of token ids must not be empty.');
  if (!ids.every((id) => typeof id === 'number' && Number.isInteger(id) && id >= 0)) throw invalid(at, 'Token ids must be non-negative integers.');
  return ids as number[];
}
