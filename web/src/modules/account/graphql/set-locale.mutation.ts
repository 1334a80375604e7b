import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ACCOUNT_FRAGMENT, type AccountFragment } from './account.fragment.ts';

export interface SetLocaleMutation {
  setLocale: AccountFragment;
}

/** Stores the member's language on the account (every browser they sign in from, and their email). */
export const SET_LOCALE: TypedDocumentNode<SetLocaleMutation, { locale: string }> = gql`
  mutation SetLocale($locale: String!) {
    setLocale(locale: $locale) {
      ...AccountFragment
    }
  }
  ${ACCOUNT_FRAGMENT}
`;
