/**
 * The member's language: what the header switch shows and changes. A choice is applied at once, kept in
 * the `svc_locale` cookie (signed-out pages, and the server's `<html lang>` on the next load) and, when
 * signed in, stored on the account so every browser the member uses follows it.
 */
import { useMutation } from '@apollo/client/react';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { chosenLanguage, isLanguage, rememberLanguage, type Language } from '../../../locales/i18n.ts';
import { SET_LOCALE } from '../graphql/set-locale.mutation.ts';
import { useMe } from './use-me.ts';

export function useLanguage(): { language: Language; choose(language: Language): Promise<void> } {
  const { i18n } = useTranslation();
  const { me } = useMe();
  const [setLocale] = useMutation(SET_LOCALE);
  return {
    language: isLanguage(i18n.language) ? i18n.language : 'en',
    choose: async (language) => {
      rememberLanguage(language);
      await i18n.changeLanguage(language);
      // The page already speaks the new language; failing to store it only loses it on other browsers.
      if (me) await setLocale({ variables: { locale: language } }).catch(() => undefined);
    },
  };
}

/**
 * Once the account is known: its stored language wins (and is remembered in this browser); an account
 * without one takes the choice this browser made while signed out.
 */
export function useAccountLanguage(): void {
  const { i18n } = useTranslation();
  const { me } = useMe();
  const [setLocale] = useMutation(SET_LOCALE);
  const accountId = me?.id;
  const stored = me?.locale;
  useEffect(() => {
    if (!accountId) return;
    if (isLanguage(stored)) {
      if (chosenLanguage() !== stored) rememberLanguage(stored);
      if (i18n.language !== stored) void i18n.changeLanguage(stored);
      return;
    }
    const chosen = chosenLanguage();
    if (chosen) void setLocale({ variables: { locale: chosen } }).catch(() => undefined);
  }, [accountId, stored, i18n, setLocale]);
}
