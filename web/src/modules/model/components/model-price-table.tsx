import { formatDiscount, formatInteger, formatMoney, formatTokenCount } from '../../../lib/format.ts';
import type { ProductModelFragment } from '../graphql/product-model.fragment.ts';
import type { TokenPriceFragment } from '../graphql/token-price.fragment.ts';

export function ModelPriceTable({ models }: { models: ProductModelFragment[] }) {
  const perTokens = new Set(models.map((model) => model.price.perTokens));
  // The server quotes every model per the same token count today; say so once, or per cell if that changes.
  const unit = perTokens.size === 1 ? formatTokenCount(models[0]?.price.perTokens ?? 1_000_000) : null;
  return (
    <div className="table-scroll">
      <table className="price-table">
        <caption className="visually-hidden">Price per {unit ?? 'token count shown'} tokens, promoted and list</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Tier</th>
            <th scope="col">Intended use</th>
            <th scope="col" className="num">
              Input{unit && <span className="th-unit"> / {unit} tokens</span>}
            </th>
            <th scope="col" className="num">
              Output{unit && <span className="th-unit"> / {unit} tokens</span>}
            </th>
            <th scope="col" className="num">
              Promotion
            </th>
            <th scope="col" className="num">
              Max output
            </th>
          </tr>
        </thead>
        <tbody>
          {models.map((model) => (
            <tr key={model.id} data-model={model.id}>
              <th scope="row">
                <code className="model-id">{model.id}</code>
                {model.routesTo && <span className="model-route">routes to {model.routesTo}</span>}
              </th>
              <td data-label="Tier">
                <span className={`tier tier--${model.class}`}>{model.tierLabel}</span>
              </td>
              <td className="use" data-label="Intended use">{model.intendedUse || <span className="muted">Not described</span>}</td>
              <td className="num" data-label={unit ? `Input / ${unit} tokens` : 'Input'}>
                <PriceCell price={model.price.input} perTokens={unit ? null : model.price.perTokens} />
              </td>
              <td className="num" data-label={unit ? `Output / ${unit} tokens` : 'Output'}>
                <PriceCell price={model.price.output} perTokens={unit ? null : model.price.perTokens} />
              </td>
              <td className="num" data-label="Promotion">
                {model.price.discount > 0 ? <span className="discount">{formatDiscount(model.price.discount)}</span> : <span className="muted">none</span>}
              </td>
              <td className="num" data-label="Max output">
                {formatInteger(model.maxOutputTokens)} tokens
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PriceCell({ price, perTokens }: { price: TokenPriceFragment; perTokens: number | null }) {
  const promoted = price.effective.amountMicros !== price.list.amountMicros;
  return (
    <span className="price-cell">
      <span className="price-cell__effective">{formatMoney(price.effective)}</span>
      {promoted && (
        <s className="price-cell__list">
          <span className="visually-hidden">list price </span>
          {formatMoney(price.list)}
        </s>
      )}
      {perTokens !== null && <span className="muted"> / {formatTokenCount(perTokens)} tokens</span>}
    </span>
  );
}

/** "−70 % on Fast / Light, −75 % on Standard / Flagship", from the catalogue itself. */
export function promotionSummary(models: ProductModelFragment[]): string | null {
  const byTier = new Map<string, number>();
  for (const model of models) if (model.price.discount > 0 && !byTier.has(model.tierLabel)) byTier.set(model.tierLabel, model.price.discount);
  if (byTier.size === 0) return null;
  return [...byTier].map(([tier, discount]) => `${formatDiscount(discount)} on ${tier}`).join(', ');
}
