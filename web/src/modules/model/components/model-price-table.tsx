import { useTranslation } from 'react-i18next';
import { useCatalogueText } from '../../../lib/catalogue-text.ts';
import { useFormat } from '../../../lib/format.ts';
import type { ProductModelFragment } from '../graphql/product-model.fragment.ts';
import type { TokenPriceFragment } from '../graphql/token-price.fragment.ts';

export function ModelPriceTable({ models }: { models: ProductModelFragment[] }) {
  const { t } = useTranslation('model');
  const format = useFormat();
  const catalogue = useCatalogueText('model');
  const perTokens = new Set(models.map((model) => model.price.perTokens));
  // The server quotes every model per the same token count today; say so once, or per cell if that changes.
  const unit = perTokens.size === 1 ? format.tokenCount(models[0]?.price.perTokens ?? 1_000_000) : null;
  return (
    <div className="table-scroll">
      <table className="price-table">
        <caption className="visually-hidden">{unit ? t('table.caption', { unit }) : t('table.captionMixed')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('table.model')}</th>
            <th scope="col">{t('table.tier')}</th>
            <th scope="col">{t('table.use')}</th>
            <th scope="col" className="num">
              {t('table.input')}
              {unit && <span className="th-unit"> {t('table.perTokens', { unit })}</span>}
            </th>
            <th scope="col" className="num">
              {t('table.output')}
              {unit && <span className="th-unit"> {t('table.perTokens', { unit })}</span>}
            </th>
            <th scope="col" className="num">
              {t('table.promotion')}
            </th>
            <th scope="col" className="num">
              {t('table.maxOutput')}
            </th>
          </tr>
        </thead>
        <tbody>
          {models.map((model) => (
            <tr key={model.id} data-model={model.id}>
              <th scope="row">
                <code className="model-id">{model.id}</code>
                {model.routesTo && <span className="model-route">{t('table.routesTo', { model: model.routesTo })}</span>}
              </th>
              <td data-label={t('table.tier')}>
                <span className={`tier tier--${model.class}`}>{catalogue(['tier', model.class], model.tierLabel)}</span>
              </td>
              <td className="use" data-label={t('table.use')}>
                {model.intendedUse ? catalogue(['intendedUse', model.id], model.intendedUse) : <span className="muted">{t('table.notDescribed')}</span>}
              </td>
              <td className="num" data-label={unit ? t('table.inputPer', { unit }) : t('table.input')}>
                <PriceCell price={model.price.input} perTokens={unit ? null : model.price.perTokens} />
              </td>
              <td className="num" data-label={unit ? t('table.outputPer', { unit }) : t('table.output')}>
                <PriceCell price={model.price.output} perTokens={unit ? null : model.price.perTokens} />
              </td>
              <td className="num" data-label={t('table.promotion')}>
                {model.price.discount > 0 ? <span className="discount">{format.discount(model.price.discount)}</span> : <span className="muted">{t('table.noPromotion')}</span>}
              </td>
              <td className="num" data-label={t('table.maxOutput')}>
                {t('table.maxOutputTokens', { count: model.maxOutputTokens })}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PriceCell({ price, perTokens }: { price: TokenPriceFragment; perTokens: number | null }) {
  const { t } = useTranslation('model');
  const format = useFormat();
  const promoted = price.effective.amountMicros !== price.list.amountMicros;
  return (
    <span className="price-cell">
      <span className="price-cell__effective">{format.money(price.effective)}</span>
      {promoted && (
        <s className="price-cell__list">
          <span className="visually-hidden">{t('table.listPrice')} </span>
          {format.money(price.list)}
        </s>
      )}
      {perTokens !== null && <span className="muted"> {t('table.perTokens', { unit: format.tokenCount(perTokens) })}</span>}
    </span>
  );
}

/** "70% off Fast / Light and 75% off Standard / Flagship", from the catalogue itself. */
export function usePromotionSummary(): (models: ProductModelFragment[]) => string | null {
  const { t } = useTranslation('model');
  const format = useFormat();
  const catalogue = useCatalogueText('model');
  return (models) => {
    const byTier = new Map<string, number>();
    for (const model of models) {
      const tier = catalogue(['tier', model.class], model.tierLabel);
      if (model.price.discount > 0 && !byTier.has(tier)) byTier.set(tier, model.price.discount);
    }
    if (byTier.size === 0) return null;
    return format.list([...byTier].map(([tier, discount]) => t('promotionOn', { tier, percent: format.percent(discount) })));
  };
}
