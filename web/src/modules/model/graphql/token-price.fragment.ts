import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';

export interface TokenPriceFragment {
  list: MoneyFragment;
  effective: MoneyFragment;
}

export const TOKEN_PRICE_FRAGMENT: TypedDocumentNode<TokenPriceFragment> = gql`
  fragment TokenPriceFragment on TokenPrice {
    list {
      ...MoneyFragment
    }
    effective {
      ...MoneyFragment
    }
  }
  ${MONEY_FRAGMENT}
`;
