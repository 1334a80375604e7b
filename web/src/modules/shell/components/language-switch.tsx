import { useTranslation } from 'react-i18next';
import { languageNames, languages, type Language } from '../../../locales/i18n.ts';
import { useLanguage } from '../../account/hooks/use-language.ts';

/** The header's language switch: each language named in itself, so anyone can find their own. */
export function LanguageSwitch() {
  const { t } = useTranslation('shell');
  const { language, choose } = useLanguage();
  return (
    <label className="language-switch">
      <span className="visually-hidden">{t('language.label')}</span>
      <span className="language-switch__icon" aria-hidden="true" />
      <select value={language} onChange={(event) => void choose(event.target.value as Language)} data-testid="language-switch">
        {languages.map((option) => (
          <option key={option} value={option} lang={option}>
            {languageNames[option]}
          </option>
        ))}
      </select>
    </label>
  );
}
