import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ACCOUNT_FRAGMENT, type AccountFragment } from './account.fragment.ts';

export interface MeQuery {
  me: AccountFragment | null;
}

/** The signed-in account, or null (the session cookie rides along with every request). */
export const ME_QUERY: TypedDocumentNode<MeQuery, Record<string, never>> = gql`
  query Me {
    me {
      ...AccountFragment
    }
  }
  ${ACCOUNT_FRAGMENT}
`;
