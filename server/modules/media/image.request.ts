/**
 * A `POST /v1/images/generations` request (the OpenAI Images API, CONFORMANCE "Models, audio, images"),
 * checked. `prompt` is required; `model` is svc-img unless named; `n` 1–10; `size` `<width>x<height>` or
 * `auto`; `response_format` `url` (the default: a link to svc's stored copy) or `b64_json` (the bytes).
 * `quality`, `style`, `background`, `output_format`, `output_compression` and `moderation` are passed to the
 * image server as asked (what a server does not know it ignores); `user` is accepted and kept by svc.
 * Streaming (`stream`, `partial_images`) is refused by name, and so is any other field, as OpenAI does.
 */
import { AppError } from '../../errors/app-error.ts';

export const defaultImageSize = '1024x1024';
/** Longest prompt, in characters (what OpenAI's newest image models take). */
export const maxImagePromptChars = 32_000;
/** Most images per request, as OpenAI allows. */
const maxImages = 10;

export interface ImagesApiRequest {
  model: string | undefined;
  prompt: string;
  n: number;
  /** `<width>x<height>`; `auto` is the default size. */
  size: string;
  format: 'url' | 'b64_json';
  /** Fields passed to the image server as asked. */
  options: Record<string, unknown>;
}

/** The fields passed on, each with the values OpenAI's image models take. */
const choices: Record<string, readonly string[]> = {
  quality: ['auto', 'standard', 'hd', 'low', 'medium', 'high'],
  style: ['vivid', 'natural'],
  background: ['auto', 'transparent', 'opaque'],
  output_format: ['png', 'jpeg', 'webp'],
  moderation: ['auto', 'low'],
};

const known = new Set(['prompt', 'model', 'n', 'size', 'response_format', 'user', 'output_compression', 'stream', 'partial_images', ...Object.keys(choices)]);

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

export function parseImagesRequest(raw: unknown): ImagesApiRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
  const body = raw as Record<string, unknown>;
  for (const field in body) if (!known.has(field)) throw invalid(field, `Unrecognized request argument supplied: ${field}.`);
  const present = (field: string) => body[field] !== undefined && body[field] !== null;
  if (typeof body.prompt !== 'string' || body.prompt.trim() === '') throw invalid('prompt', 'prompt is required: a text description of the image.');
  if (body.prompt.length > maxImagePromptChars) throw invalid('prompt', `prompt may be at most ${maxImagePromptChars} characters.`);
  if (present('model') && (typeof body.model !== 'string' || body.model === '')) throw invalid('model', 'model must be an image model id, such as svc-img.');
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > maxImages) throw invalid('n', `n must be a whole number from 1 to ${maxImages}.`);
  const size = body.size ?? 'auto';
  if (typeof size !== 'string') throw invalid('size', 'size must be a string such as "1024x1024".');
  const format = body.response_format ?? 'url';
  if (format !== 'url' && format !== 'b64_json') throw invalid('response_format', 'response_format must be url or b64_json.');
  if (body.stream === true || (present('partial_images') && body.partial_images !== 0)) {
    throw invalid(body.stream === true ? 'stream' : 'partial_images', 'Streaming image generation is not supported: send the request without stream or partial_images; the reply comes when the images are made.');
  }
  if (present('stream') && typeof body.stream !== 'boolean') throw invalid('stream', 'stream must be a boolean.');
  if (present('user') && typeof body.user !== 'string') throw invalid('user', 'user must be a string.');
  const options: Record<string, unknown> = {};
  for (const [field, values] of Object.entries(choices)) {
    if (!present(field)) continue;
    if (!values.includes(body[field] as string)) throw invalid(field, `${field} must be one of ${values.join(', ')}.`);
    options[field] = body[field];
  }
  if (present('output_compression')) {
    const compression = body.output_compression;
    if (typeof compression !== 'number' || !Number.isInteger(compression) || compression < 0 || compression > 100) throw invalid('output_compression', 'output_compression must be a whole number from 0 to 100.');
    options.output_compression = compression;
  }
  return { model: present('model') ? (body.model as string) : undefined, prompt: body.prompt, n, size: size === 'auto' ? defaultImageSize : size, format, options };
}
