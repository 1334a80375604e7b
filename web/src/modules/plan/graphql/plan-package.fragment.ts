import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';

export type ModelClass = 'fast' | 'premium';
export type PoolWindow = 'day' | 'week' | 'month';

export interface PoolFragment {
  class: ModelClass;
  window: PoolWindow;
  limit: MoneyFragment;
}

/** A checkout price in one currency (`packages[].prices`). */
export interface PackagePriceFragment {
  /** Exact decimal string ("65.00"). */
  amount: string;
  amountMinor: number;
  currency: string;
}

export interface PlanPackageFragment {
  id: string;
  name: string;
  interval: string;
  multiplier: number;
  price: MoneyFragment;
  /** What checkout charges per currency (`packages[].prices`); empty for a package that cannot be bought. */
  prices: PackagePriceFragment[];
  pools: PoolFragment[];
}

export const PLAN_PACKAGE_FRAGMENT: TypedDocumentNode<PlanPackageFragment> = gql`
  fragment PlanPackageFragment on PlanPackage {
    id
    name
    interval
    multiplier
    price {
      ...MoneyFragment
    }
    prices {
      amount
      amountMinor
      currency
    }
    pools {
      class
      window
      limit {
        ...MoneyFragment
      }
    }
  }
  ${MONEY_FRAGMENT}
`;
