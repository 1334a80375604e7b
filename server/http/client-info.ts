import type { Locale } from '../i18n/locale.ts';

/** Who is at the other end of a request, as the transport saw it: for throttling, the session list and mail. */
export interface ClientInfo {
  ip?: string | null;
  userAgent?: string | null;
  /** The caller's language (cookie, else Accept-Language), for mail to an address with no account language. */
  locale?: Locale;
}
