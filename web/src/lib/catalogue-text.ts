/**
 * Text that comes from the server's catalogue (plan names and descriptions, what a model is for) is
 * English config an operator may rewrite. The built-in defaults are translated in the module's own
 * namespace under `catalogue` (keyed by id, so ids with dots stay whole); the translation is shown only
 * while the server still sends that English default — an operator's own wording is shown as written.
 */
import { useTranslation } from 'react-i18next';

export function useCatalogueText(namespace: 'plan' | 'model'): (path: readonly string[], serverText: string) => string {
  const lookup = useCatalogueLookup(namespace);
  return (path, serverText) => {
    const translated = lookup(path);
    return lookup(path, 'en') === serverText && translated !== undefined ? translated : serverText;
  };
}

/** A built-in catalogue text in the reader's language (or `language`); undefined when there is none. */
export function useCatalogueLookup(namespace: 'plan' | 'model'): (path: readonly string[], language?: string) => string | undefined {
  const { i18n } = useTranslation(namespace);
  return (path, language = i18n.language) => {
    const found = path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), i18n.getResourceBundle(language, namespace)?.catalogue);
    return typeof found === 'string' ? found : undefined;
  };
}
