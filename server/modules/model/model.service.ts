/**
 * The product model catalogue (spec §2.1): ids, class, list and promoted prices, intended use.
 * Built once from config; the gateway's routing reads the same records.
 */
import type { Config, ModelClass, ProductModelConfig } from '../../config/config.ts';
import { discounted, money, type Micros, type Money } from '../../config/money.ts';

export interface TokenPrice {
  list: Money;
  /** After the promotion for the model's class. */
  effective: Money;
}

/** What a model produces, by the executor that serves it: chat (text), search (svc.search.v1), image, speech, music or embedding. */
export type ModelKind = 'chat' | 'search' | 'image' | 'speech' | 'music' | 'embedding';

export interface ProductModel {
  id: string;
  /** What people read: config `name`, else the id. */
  name: string;
  kind: ModelKind;
  class: ModelClass;
  tierLabel: string;
  intendedUse: string;
  maxOutputTokens: number;
  /** The context window in tokens (prompt + output), as the model's upstream serves it. */
  contextLength: number;
  /** For `auto`: the model requests are routed to. */
  routesTo: string | null;
  /** Prices per 1,000,000 tokens. */
  price: { perTokens: number; discount: number; input: TokenPrice; output: TokenPrice };
}

export const tierLabels: Record<ModelClass, string> = { fast: 'Fast / Light', premium: 'Standard / Flagship' };

export class ModelCatalogue {
  readonly models: readonly ProductModel[];
  readonly #byId: Map<string, ProductModel>;
  readonly #config: Config;

  readonly #kinds: Readonly<Record<string, ModelKind>>;

  /** `kinds`: the product ids a non-chat executor serves (the composition root knows which); the rest are chat. */
  constructor(config: Config, kinds: Readonly<Record<string, ModelKind>> = {}) {
    this.#config = config;
    this.#kinds = kinds;
    this.models = Object.entries(config.models).map(([id, model]) => this.#view(id, model));
    this.#byId = new Map(this.models.map((model) => [model.id, model]));
  }

  get(id: string): ProductModel | undefined {
    return this.#byId.get(id);
  }

  get ids(): string[] {
    return this.models.map((model) => model.id);
  }

  /** The promotion per class as a fraction (0.7 = 70 % off). */
  promotion(): Record<ModelClass, number> {
    const { fast, premium } = this.#config.promotion;
    return { fast: fast / 10_000, premium: premium / 10_000 };
  }

  #view(id: string, model: ProductModelConfig): ProductModel {
    const { currency, promotion } = this.#config;
    const discount = promotion[model.tier];
    const price = (list: Micros): TokenPrice => ({ list: money(list, currency), effective: money(discounted(list, discount), currency) });
    const routed = model.routesTo ?? id;
    return {
      id,
      name: model.name ?? id,
      kind: this.#kinds[routed] ?? (model.kind === 'embedding' ? 'embedding' : 'chat'),
      class: model.tier,
      tierLabel: tierLabels[model.tier],
      intendedUse: model.intendedUse,
      maxOutputTokens: model.maxOutputTokens,
      contextLength: model.contextLength,
      routesTo: model.routesTo ?? null,
      price: { perTokens: 1_000_000, discount: discount / 10_000, input: price(model.inputPrice), output: price(model.outputPrice) },
    };
  }
}
