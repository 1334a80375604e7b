/**
 * What an audit entry changed, as people read it: each field named in words, "before → after", and every
 * value in its own terms — amounts as money in their currency, times in the reader's zone, packages,
 * roles, states and payment methods by name, accounts as links. A field or value from a newer server
 * than this page is shown as its code.
 */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { useBillingText } from '../../billing/components/labels.ts';
import { minorAmount } from '../../billing/components/minor.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import type { AuditEntryFragment } from '../graphql/audit-entry.fragment.ts';
import type { AccountRole } from '../graphql/staff-account.fragment.ts';
import { accountRoles, auditFields as fieldOrder, useAuditText } from './labels.ts';

type Values = Record<string, unknown>;

const moneyFields = new Set(['amountMinor', 'creditMinor', 'paidMinor']);
const packageFields = new Set(['planPackage', 'packageId', 'nextPackageId']);
const accountFields = new Set(['accountId', 'organisationId']);
/** A revoked key's identity: the target column shows it (and its owner). */
const keyIdentity = new Set(['accountId', 'name', 'prefix', 'last4', 'kind']);

/** Words the catalogue has for a field's values: `audit.value.<field>.<value>`. */
const valueWords: Record<string, readonly string[]> = {
  result: ['paid', 'failed', 'expired', 'pending', 'unchanged', 'skipped', 'error'],
  denied: ['own_account', 'own_organisation', 'own_application'],
  password: ['set', 'unchanged'],
};
const purchaseKinds = ['start', 'extend', 'upgrade', 'downgrade'];
const applicationStates = ['pending_review', 'approved', 'rejected', 'withdrawn'];
const applicationKinds = ['commercial', 'enterprise'];

/** The fields that changed, "field: before → after"; a value only one side has is shown alone. */
export function AuditChange({ entry }: { entry: AuditEntryFragment }) {
  const { t } = useTranslation('staff');
  const text = useAuditText();
  const show = useAuditValue(entry);
  const { before, after } = entry;
  // In the catalogue's order (the database keeps no order of its own): state first, then who, what, how much, when.
  const keys = [...new Set([...Object.keys(after ?? {}), ...Object.keys(before ?? {})])].filter((key) => shown(entry, key)).sort((x, y) => rank(x) - rank(y));
  if (keys.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="audit-change">
      {keys.map((key) => {
        const old = before && key in before ? before[key] : undefined;
        const now = after && key in after ? after[key] : undefined;
        const label = text.field(key);
        return (
          <li key={key} data-field={key}>
            <span className="audit-change__field">{label ?? <code>{key}</code>}</span>{' '}
            {old !== undefined && now !== undefined ? (
              <>
                {show(key, old, before!)} <span aria-label={t('audit.became')}>→</span> {show(key, now, after!)}
              </>
            ) : (
              show(key, now ?? old, (now === undefined ? before : after)!)
            )}
          </li>
        );
      })}
    </ul>
  );
}

function rank(key: string): number {
  const at = (fieldOrder as readonly string[]).indexOf(key);
  return at === -1 ? fieldOrder.length : at;
}

/** Whether a field is worth a line: not unchanged, not said elsewhere (a key's identity, money's currency), not a zero credit. */
function shown(entry: AuditEntryFragment, key: string): boolean {
  const { before, after } = entry;
  if (before && after && key in before && key in after) return JSON.stringify(before[key]) !== JSON.stringify(after[key]);
  if (entry.targetType === 'api_key' && keyIdentity.has(key)) return false;
  // The currency is part of every amount shown.
  if (key === 'currency' && [before, after].some((side) => side && Object.keys(side).some((field) => moneyFields.has(field)))) return false;
  if (key === 'creditMinor' && (after?.[key] ?? before?.[key]) === 0) return false;
  return true;
}

/** A recorded value in words. `side` is the before or after it belongs to (an amount's currency is there). */
function useAuditValue(entry: AuditEntryFragment): (key: string, value: unknown, side: Values) => ReactNode {
  const { t } = useTranslation(['staff', 'enterprise']);
  const format = useFormat();
  const text = useAuditText();
  const billing = useBillingText();
  const packageName = usePackageName();
  const area = entry.action.split(':')[0];
  return (key, value, side) => {
    if (value === null || value === undefined) return <span className="muted">{t('audit.noValue')}</span>;
    if (typeof value === 'boolean') return value ? t('audit.yes') : t('audit.no');
    if (typeof value === 'number') {
      const currency = typeof side.currency === 'string' ? side.currency : null;
      if (moneyFields.has(key) && currency) return format.money({ amount: minorAmount(value, currency), currency });
      return format.integer(value);
    }
    if (typeof value !== 'string') return <code>{JSON.stringify(value)}</code>;
    if (/^\d{4}-\d\d-\d\dT/.test(value)) return format.dateTime(value);
    if (packageFields.has(key)) return packageName(value);
    if (key === 'role' && accountRoles.includes(value as AccountRole)) return text.role(value as AccountRole);
    if (key === 'provider') return billing.providerName(value);
    if (accountFields.has(key)) return <AccountLink id={value} />;
    if (key === 'state') {
      if (area === 'application' && applicationStates.includes(value)) return t(`enterprise:state.${value as 'approved'}`);
      return billing.stateLabel(value);
    }
    if (key === 'kind') {
      if (area === 'application' && applicationKinds.includes(value)) return t(`enterprise:kind.${value as 'commercial'}.name`);
      if (area === 'order' && purchaseKinds.includes(value)) return t(`audit.value.kind.${value as 'start'}`);
    }
    if (valueWords[key]?.includes(value)) return t(`audit.value.${key as 'result'}.${value as 'paid'}`);
    return <code>{value}</code>;
  };
}

function AccountLink({ id }: { id: string }) {
  return (
    <Link to={`/admin/accounts/${id}`}>
      <code>{id.length > 13 ? `${id.slice(0, 8)}…` : id}</code>
    </Link>
  );
}
