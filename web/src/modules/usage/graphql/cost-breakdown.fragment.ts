import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';

/** One token class of a cost (GraphQL `CostLine`). */
interface CostLineFragment {
  tokenClass: 'input' | 'output';
  tokens: number;
  listPricePerMillion: MoneyFragment;
  /** 7000 = 70 % off; 0 at list price. */
  promotionBasisPoints: number;
  pricePerMillion: MoneyFragment;
  /** Exact decimal of the currency, below a micro-unit. */
  subtotal: string;
}

/** How a request's cost was computed (GraphQL `CostBreakdown`); only request pages ask for it, not lists. */
export interface CostBreakdownFragment {
  currency: string;
  paidFromCredit: boolean;
  lines: CostLineFragment[];
  exact: string;
  rounded: MoneyFragment;
  reserved: MoneyFragment;
  cappedAtReservation: boolean;
  total: MoneyFragment;
  matchesCharge: boolean;
}

/** A request as its page reads it: the record and how its cost was computed (null: its model is gone). */
export interface RequestPricing {
  pricing: CostBreakdownFragment | null;
}

export const COST_BREAKDOWN_FRAGMENT: TypedDocumentNode<CostBreakdownFragment> = gql`
  fragment CostBreakdownFragment on CostBreakdown {
    currency
    paidFromCredit
    lines {
      tokenClass
      tokens
      listPricePerMillion {
        ...MoneyFragment
      }
      promotionBasisPoints
      pricePerMillion {
        ...MoneyFragment
      }
      subtotal
    }
    exact
    rounded {
      ...MoneyFragment
    }
    reserved {
      ...MoneyFragment
    }
    cappedAtReservation
    total {
      ...MoneyFragment
    }
    matchesCharge
  }
  ${MONEY_FRAGMENT}
`;
