import { builder } from '../../graphql-core/builder.ts';
import { MoneyRef } from '../model/model.schema.ts';
import type { KeyLimitsInput, KeyLimitsView } from './key-limits.ts';

export const KeyLimitsRef = builder.objectRef<KeyLimitsView>('KeyLimits').implement({
  description: "A key's own limits (enforced when each request is admitted) and what it has spent so far in the current day and month.",
  fields: (t) => ({
    budgetDay: t.expose('budgetDay', { type: MoneyRef, nullable: true, description: 'Spend cap per calendar day (the service time zone), or null for none.' }),
    budgetMonth: t.expose('budgetMonth', { type: MoneyRef, nullable: true, description: 'Spend cap per calendar month, or null for none.' }),
    requestsPerMinute: t.exposeInt('requestsPerMinute', { nullable: true, description: "Requests per minute for this key (at most the plan's), or null for the plan's." }),
    models: t.exposeStringList('models', { nullable: true, description: 'The models this key may call, or null for every model of the plan.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the key stops working, or null for never.' }),
    spentToday: t.expose('spentToday', { type: MoneyRef, description: 'Settled spend of this key in the current day.' }),
    spentThisMonth: t.expose('spentThisMonth', { type: MoneyRef, description: 'Settled spend of this key in the current month.' }),
  }),
});

export const KeyLimitsInputRef = builder.inputType('KeyLimitsInput', {
  description: 'Limits of a key. A field left out stays as it is (on update); null lifts that limit. A bad value gets invalid_request naming the field.',
  fields: (t) => ({
    budgetDay: t.string({ description: 'Spend cap per day, a decimal amount in the service currency ("5" or "5.00"); null for none.' }),
    budgetMonth: t.string({ description: 'Spend cap per month, a decimal amount ("50"); null for none.' }),
    requestsPerMinute: t.int({ description: "Requests per minute, at most the plan's; null for the plan's." }),
    models: t.stringList({ description: 'Model ids this key may call (models of your plan); null for all of them.' }),
    expiresAt: t.string({ description: 'An ISO date ("2027-01-31": the key works through that day, UTC) or date-time, in the future; null for never.' }),
  }),
});

/** The GraphQL input as the service takes it (fields left out stay absent). */
export function keyLimitsArg(input: Record<string, unknown> | null | undefined): KeyLimitsInput {
  if (!input) return {};
  const out: KeyLimitsInput = {};
  for (const field of ['budgetDay', 'budgetMonth', 'requestsPerMinute', 'models', 'expiresAt'] as const) if (input[field] !== undefined) out[field] = input[field];
  return out;
}
