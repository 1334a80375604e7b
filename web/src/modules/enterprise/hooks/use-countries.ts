/**
 * Countries for the application form, named in the reader's language by `Intl.DisplayNames` (so no
 * catalogue of country names to keep), sorted as that language sorts. The server stores the ISO code.
 */
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { intlLocale } from '../../../lib/format.ts';
import { isLanguage } from '../../../locales/languages.ts';

// ISO 3166-1 alpha-2, assigned codes.
const codes = (
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ ' +
  'DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
  'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ ' +
  'OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ ' +
  'UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
).split(' ');

const locale = (language: string) => intlLocale(isLanguage(language) ? language : 'en');

function displayNames(language: string): Intl.DisplayNames {
  return new Intl.DisplayNames([locale(language)], { type: 'region' });
}

/** `{ code, name }` for every country, sorted by name in the reader's language. */
export function useCountries(): { code: string; name: string }[] {
  const { i18n } = useTranslation();
  const language = i18n.language;
  return useMemo(() => {
    const names = displayNames(language);
    const collator = new Intl.Collator(locale(language));
    return codes.map((code) => ({ code, name: names.of(code) ?? code })).sort((a, b) => collator.compare(a.name, b.name));
  }, [language]);
}

/** A stored ISO code as the reader says it ("DE" → "Germany" / "德国"); an unknown code as itself. */
export function useCountryName(): (code: string) => string {
  const { i18n } = useTranslation();
  const language = i18n.language;
  return useMemo(() => {
    const names = displayNames(language);
    return (code: string) => {
      try {
        return names.of(code.toUpperCase()) ?? code;
      } catch {
        return code;
      }
    };
  }, [language]);
}
