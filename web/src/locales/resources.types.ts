/**
 * Typed keys: `t('…')` with a key missing from the English catalogue does not compile. One line per
 * namespace (= web module); the JSON files themselves are found by `i18n.ts` without a list.
 */
import 'i18next';
import type account from './en/account.json';
import type billing from './en/billing.json';
import type device from './en/device.json';
import type docs from './en/docs.json';
import type home from './en/home.json';
import type model from './en/model.json';
import type plan from './en/plan.json';
import type shell from './en/shell.json';
import type staff from './en/staff.json';
import type usage from './en/usage.json';
import type search from './en/search.json';

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'shell';
    returnNull: false;
  }
  interface ResourceNamespaceMap {
    account: typeof account;
    billing: typeof billing;
    device: typeof device;
    docs: typeof docs;
    home: typeof home;
    model: typeof model;
    plan: typeof plan;
    shell: typeof shell;
    staff: typeof staff;
    usage: typeof usage;
    search: typeof search;
  }
}
