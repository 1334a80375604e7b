import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { ModelClass } from '../../plan/graphql/plan-package.fragment.ts';
import { TOKEN_PRICE_FRAGMENT, type TokenPriceFragment } from './token-price.fragment.ts';

export interface ProductModelFragment {
  id: string;
  class: ModelClass;
  tierLabel: string;
  intendedUse: string;
  maxOutputTokens: number;
  routesTo: string | null;
  price: {
    perTokens: number;
    /** 0.7 means 70 % off the list price. */
    discount: number;
    input: TokenPriceFragment;
    output: TokenPriceFragment;
  };
}

export const PRODUCT_MODEL_FRAGMENT: TypedDocumentNode<ProductModelFragment> = gql`
  fragment ProductModelFragment on ProductModel {
    id
    class
    tierLabel
    intendedUse
    maxOutputTokens
    routesTo
    price {
      perTokens
      discount
      input {
        ...TokenPriceFragment
      }
      output {
        ...TokenPriceFragment
      }
    }
  }
  ${TOKEN_PRICE_FRAGMENT}
`;
