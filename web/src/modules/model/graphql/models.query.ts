import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { PRODUCT_MODEL_FRAGMENT, type ProductModelFragment } from './product-model.fragment.ts';

export interface ModelsQuery {
  models: ProductModelFragment[];
}

/** The public model catalogue with list and promoted prices; no sign-in needed. */
export const MODELS_QUERY: TypedDocumentNode<ModelsQuery, Record<string, never>> = gql`
  query Models {
    models {
      ...ProductModelFragment
    }
  }
  ${PRODUCT_MODEL_FRAGMENT}
`;
