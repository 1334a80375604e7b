/**
 * How a request's cost was computed, under its facts: tokens × price per token class, the promotion, the
 * exact sum, rounded up to whole micro-units, capped at the reservation — the server's figures
 * (`CostBreakdown`), formatted here, never recomputed, so the total is the charge the row shows.
 */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { CostBreakdownFragment } from '../graphql/cost-breakdown.fragment.ts';

/** Prices are quoted per this many tokens (GraphQL `CostLine.pricePerMillion`). */
const perTokens = 1_000_000;

export function CostBreakdown({ pricing, cost }: { pricing: CostBreakdownFragment; cost: MoneyFragment }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const unit = format.tokenCount(perTokens);
  const promotion = pricing.lines.find((line) => line.promotionBasisPoints > 0)?.promotionBasisPoints ?? 0;
  const exact = (amount: string) => format.exactMoney({ amount, currency: pricing.currency });
  const listPrice = (tokenClass: 'input' | 'output') => {
    const line = pricing.lines.find((candidate) => candidate.tokenClass === tokenClass);
    return line ? format.money(line.listPricePerMillion) : '';
  };
  return (
    <section className="cost-breakdown" data-testid="cost-breakdown" aria-labelledby="cost-breakdown-title">
      <h2 id="cost-breakdown-title" className="cost-breakdown__title">
        {t('request.pricing.title')}
      </h2>
      <div className="cost-breakdown__frame">
        <table className="cost-breakdown__table">
          <tbody>
            {pricing.lines.map((line) => (
              <Step key={line.tokenClass} testId={`cost-line-${line.tokenClass}`} label={t(`request.pricing.class.${line.tokenClass}`)} amount={exact(line.subtotal)}>
                {t('request.pricing.line', { tokens: format.integer(line.tokens), price: format.money(line.pricePerMillion), unit })}
              </Step>
            ))}
            {promotion > 0 && (
              <Step testId="cost-promotion" label={t('request.pricing.promotion')}>
                {t('request.pricing.promotionDetail', { discount: format.discount(promotion / 10_000), input: listPrice('input'), output: listPrice('output'), unit })}
              </Step>
            )}
            <Step label={t('request.pricing.exact')} amount={exact(pricing.exact)} />
            <Step label={t('request.pricing.rounded')} amount={format.money(pricing.rounded)} muted>
              {t('request.pricing.roundedDetail')}
            </Step>
            {pricing.cappedAtReservation && (
              <Step testId="cost-capped" label={t('request.pricing.capped')} amount={format.money(pricing.reserved)} muted>
                {t('request.pricing.cappedDetail')}
              </Step>
            )}
            {pricing.paidFromCredit && (
              <Step testId="cost-paid-from-credit" label={t('request.pricing.paidFromCredit')} muted>
                {t('request.pricing.paidFromCreditDetail')}
              </Step>
            )}
          </tbody>
          <tfoot>
            <Step label={t('request.pricing.total')} amount={<strong data-testid="cost-breakdown-total">{format.money(pricing.total)}</strong>} />
          </tfoot>
        </table>
      </div>
      {!pricing.matchesCharge && (
        <p className="cost-breakdown__note" role="note" data-testid="cost-breakdown-stale">
          {t('request.pricing.pricesChanged', { cost: format.money(cost) })}
        </p>
      )}
    </section>
  );
}

/** One step of the computation: what it is, how (tokens × price, a note), and the amount it comes to. */
function Step({ label, amount, muted, testId, children }: { label: string; amount?: ReactNode; muted?: boolean; testId?: string; children?: ReactNode }) {
  return (
    <tr data-testid={testId}>
      <th scope="row">{label}</th>
      <td className={muted ? 'muted' : undefined}>{children}</td>
      <td className="num">{amount}</td>
    </tr>
  );
}
