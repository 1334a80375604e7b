/**
 * What to show a person for an error, in their language. Service errors carry both languages (GraphQL
 * `extensions.messageZh`, the REST envelope's `messageZh`): Chinese readers get the Chinese. HTTP and
 * network failures are described by the app's own catalogue. Keep the error, not its text, in state and
 * call this when rendering, so switching language also switches the message on screen.
 */
import { CombinedGraphQLErrors, ServerError, ServerParseError } from '@apollo/client/errors';
import { useTranslation } from 'react-i18next';

export function useErrorMessage(): (error: unknown) => string {
  const { t, i18n } = useTranslation('shell');
  const chinese = i18n.language === 'zh-CN';
  return (error) => {
    if (CombinedGraphQLErrors.is(error)) {
      return error.errors
        .map((entry) => {
          const zh = entry.extensions?.messageZh;
          return chinese && typeof zh === 'string' ? zh : entry.message;
        })
        .join('\n');
    }
    if (ServerError.is(error) || ServerParseError.is(error)) return t('error.http', { status: error.statusCode });
    // fetch() rejects with a TypeError when the server cannot be reached at all.
    if (error instanceof TypeError) return t('error.network');
    return error instanceof Error ? error.message : String(error);
  };
}
