import { builder } from '../../graphql/builder.ts';
import type { Money } from '../../config/money.ts';
import type { ProductModel, TokenPrice } from './model.service.ts';

export const ModelClassEnum = builder.enumType('ModelClass', {
  description: 'Pricing and pool class: fast (Fast / Light) or premium (Standard / Flagship).',
  values: {
    fast: { value: 'fast', description: 'Fast / Light tier.' },
    premium: { value: 'premium', description: 'Standard / Flagship tier.' },
  } as const,
});

export const MoneyRef = builder.objectRef<Money>('Money').implement({
  description: 'An amount of money with its explicit currency.',
  fields: (t) => ({
    amountMicros: t.expose('amountMicros', { type: 'Micros', description: 'Integer micro-units of the currency.' }),
    amount: t.exposeString('amount', { description: 'The same amount as a decimal string, e.g. "0.042".' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code.' }),
  }),
});

const TokenPriceRef = builder.objectRef<TokenPrice>('TokenPrice').implement({
  description: 'A price per 1,000,000 tokens, before and after the current promotion.',
  fields: (t) => ({
    list: t.expose('list', { type: MoneyRef, description: 'List price.' }),
    effective: t.expose('effective', { type: MoneyRef, description: 'Price after the promotion for this class.' }),
  }),
});

const ModelPriceRef = builder.objectRef<ProductModel['price']>('ModelPrice').implement({
  description: 'Token prices of a model.',
  fields: (t) => ({
    perTokens: t.exposeInt('perTokens', { description: 'Prices are per this many tokens (1,000,000).' }),
    discount: t.exposeFloat('discount', { description: 'Promotion as a fraction: 0.7 means 70 % off the list price.' }),
    input: t.expose('input', { type: TokenPriceRef, description: 'Price of input (prompt) tokens.' }),
    output: t.expose('output', { type: TokenPriceRef, description: 'Price of output (completion) tokens.' }),
  }),
});

export const ProductModelRef = builder.objectRef<ProductModel>('ProductModel').implement({
  description: 'A product model id accepted by /v1/chat/completions.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The id clients send as `model`.' }),
    class: t.expose('class', { type: ModelClassEnum, description: 'Pricing and pool class.' }),
    tierLabel: t.exposeString('tierLabel', { description: 'Human name of the tier.' }),
    intendedUse: t.exposeString('intendedUse', { description: 'What the model is for.' }),
    maxOutputTokens: t.exposeInt('maxOutputTokens', { description: 'Largest accepted max_tokens.' }),
    routesTo: t.exposeString('routesTo', { nullable: true, description: 'For auto: the model it routes to.' }),
    price: t.expose('price', { type: ModelPriceRef, description: 'Token prices.' }),
  }),
});

builder.queryField('models', (t) =>
  t.field({
    type: [ProductModelRef],
    description: 'The public model catalogue with list and promoted prices.',
    resolve: (_root, _args, { services }) => services.models.models,
  }),
);
