/**
 * Typed keys: `t('…')` with a key missing from the English catalogue does not compile. One line per
 * namespace (= web module); the JSON files themselves are found by `i18n.ts` without a list.
 */
import 'i18next';
import type account from './en/account.json';
import type alerts from './en/alerts.json';
import type billing from './en/billing.json';
import type credit from './en/credit.json';
import type device from './en/device.json';
import type docs from './en/docs.json';
import type enterprise from './en/enterprise.json';
import type home from './en/home.json';
import type model from './en/model.json';
import type oauth from './en/oauth.json';
import type plan from './en/plan.json';
import type shell from './en/shell.json';
import type staff from './en/staff.json';
import type statement from './en/statement.json';
import type usage from './en/usage.json';
import type search from './en/search.json';

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'shell';
    returnNull: false;
  }
  interface ResourceNamespaceMap {
    account: typeof account;
    alerts: typeof alerts;
    billing: typeof billing;
    credit: typeof credit;
    device: typeof device;
    docs: typeof docs;
    enterprise: typeof enterprise;
    home: typeof home;
    model: typeof model;
    oauth: typeof oauth;
    plan: typeof plan;
    shell: typeof shell;
    staff: typeof staff;
    statement: typeof statement;
    usage: typeof usage;
    search: typeof search;
  }
}
