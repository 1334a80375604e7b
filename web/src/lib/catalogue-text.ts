/**
 * Text that comes from the server's catalogue (plan names and descriptions, what a model is for) is
 * English config an operator may rewrite. The built-in defaults are translated in the module's own
 * namespace under `catalogue` (keyed by id, so ids with dots stay whole); the translation is shown only
 * while the server still sends that English default — an operator's own wording is shown as written.
 */
import { useTranslation } from 'react-i18next';

export function useCatalogueText(namespace: 'plan' | 'model'): (path: readonly string[], serverText: string) => string {
  const { i18n } = useTranslation(namespace);
  const lookup = (language: string, path: readonly string[]) =>
    path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), i18n.getResourceBundle(language, namespace)?.catalogue);
  return (path, serverText) => {
    const translated = lookup(i18n.language, path);
    return lookup('en', path) === serverText && typeof translated === 'string' ? translated : serverText;
  };
}
