import { builder } from '../../graphql-core/builder.ts';
import { ModelClassEnum, MoneyRef } from '../model/model.schema.ts';
import type { Plan, PlanPackage, Pool } from './plan.service.ts';

export const PoolWindowEnum = builder.enumType('PoolWindow', {
  description: 'A calendar window a usage pool resets on.',
  values: {
    day: { value: 'day', description: 'Resets at midnight in the service time zone.' },
    week: { value: 'week', description: 'Resets on Monday (ISO week).' },
    month: { value: 'month', description: 'Resets on the first of the month.' },
  } as const,
});

const PoolRef = builder.objectRef<Pool>('Pool').implement({
  description: 'Included usage for one model class in one window.',
  fields: (t) => ({
    class: t.expose('class', { type: ModelClassEnum, description: 'Model class the pool is for.' }),
    window: t.expose('window', { type: PoolWindowEnum, description: 'Window the pool resets on.' }),
    limit: t.expose('limit', { type: MoneyRef, description: 'Usage included per window, at effective prices.' }),
  }),
});

export const PlanPackageRef = builder.objectRef<PlanPackage>('PlanPackage').implement({
  description: 'A purchasable package of a plan (Max has x5 and x20).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Package id, e.g. max_x5.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    price: t.expose('price', { type: MoneyRef, description: 'Price per interval.' }),
    interval: t.exposeString('interval', { description: 'Billing interval (month).' }),
    multiplier: t.exposeInt('multiplier', { description: "How many times the plan's base pools are included." }),
    pools: t.expose('pools', { type: [PoolRef], description: 'Included usage per class and window.' }),
  }),
});

export const PlanRef = builder.objectRef<Plan>('Plan').implement({
  description: 'A membership tier: Free, Pro or Max.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'free, pro or max.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    description: t.exposeString('description', { description: 'What the plan is for.' }),
    requestsPerMinute: t.exposeInt('requestsPerMinute', { description: 'Per-account request rate limit.' }),
    packages: t.expose('packages', { type: [PlanPackageRef], description: 'Packages of this plan.' }),
  }),
});

builder.queryField('plans', (t) =>
  t.field({
    type: [PlanRef],
    description: 'The public plan catalogue with included usage.',
    resolve: (_root, _args, { services }) => services.plans.list(),
  }),
);

builder.queryField('assignablePlans', (t) =>
  t.field({
    type: [PlanRef],
    description: 'Every plan with its packages, including those only staff assign (enterprise, for organisations): for package pickers in the admin app.',
    resolve: (_root, _args, { services }) => services.plans.listAll(),
  }),
);
