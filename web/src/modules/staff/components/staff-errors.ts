/**
 * What to tell a person when a staff action or lookup fails: the server's own message where it is written
 * for people (it names the rule or the field), in plain words where it is not.
 */
import { CombinedGraphQLErrors, ServerError } from '@apollo/client/errors';

interface Problem {
  code: string | null;
  message: string;
  param: string | null;
  requestId: string | null;
}

function problemOf(error: unknown): Problem | null {
  if (CombinedGraphQLErrors.is(error)) {
    const first = error.errors[0];
    const extensions = (first?.extensions ?? {}) as { code?: string; param?: string; requestId?: string };
    return { code: extensions.code ?? null, message: first?.message ?? error.message, param: extensions.param ?? null, requestId: extensions.requestId ?? null };
  }
  if (ServerError.is(error)) {
    try {
      const body = JSON.parse(error.bodyText) as { errors?: { message: string; extensions?: { code?: string; param?: string; requestId?: string } }[] };
      const first = body.errors?.[0];
      if (first) return { code: first.extensions?.code ?? null, message: first.message, param: first.extensions?.param ?? null, requestId: first.extensions?.requestId ?? null };
    } catch {
      // Not a GraphQL answer (a proxy's error page): fall through to the generic words.
    }
    return { code: null, message: `The server answered ${error.statusCode}.`, param: null, requestId: null };
  }
  return null;
}

/** One sentence or two for an error, for a form or a dialog. */
export function describeError(error: unknown): string {
  const problem = problemOf(error);
  if (!problem) return 'The server could not be reached. Check your connection and try again.';
  switch (problem.code) {
    case 'sign_in_required':
      return 'Your session has ended. Sign in again, then repeat what you were doing.';
    case 'forbidden':
      return `You don't have permission to do this. ${sentence(problem.message.replace(/^Forbidden:\s*/, ''))}`;
    case 'not_found':
      return `${sentence(problem.message)} It may have been removed; reload the page.`;
    case 'invalid_request':
      if (problem.param === 'reason') return 'Give a reason: it is kept in the audit log with your name.';
      if (problem.param === 'until') return 'Pick an end date in the future, or leave it empty for no end.';
      return sentence(problem.message);
    case 'rate_limited':
      return 'Too many requests just now. Wait a moment and try again.';
    case 'service_unavailable':
      return 'The service is busy or partly down. Try again in a minute.';
    default: {
      const reference = problem.requestId ? ` If it keeps happening, give the request id ${problem.requestId} to an engineer.` : '';
      return `Something went wrong on the server (${problem.code ?? 'unknown error'}). Try again.${reference}`;
    }
  }
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
}
