import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { SESSION_FRAGMENT, type SessionFragment } from './session.fragment.ts';

export const SESSIONS_QUERY: TypedDocumentNode<{ sessions: SessionFragment[] }, Record<string, never>> = gql`
  query Sessions {
    sessions {
      ...SessionFragment
    }
  }
  ${SESSION_FRAGMENT}
`;
