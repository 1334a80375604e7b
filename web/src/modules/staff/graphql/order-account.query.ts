import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** Whose order it is, by email. */
export const ORDER_ACCOUNT_QUERY: TypedDocumentNode<{ account: { id: string; email: string } | null }, { id: string }> = gql`
  query OrderAccount($id: ID!) {
    account(id: $id) {
      id
      email
    }
  }
`;
