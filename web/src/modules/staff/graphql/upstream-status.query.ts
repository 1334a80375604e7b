import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { UPSTREAM_STATUS_FRAGMENT, type UpstreamStatusFragment } from './upstream-status.fragment.ts';

/** Staff: whether chat has a model server to go to, and whether it answers (the admin app's banner). */
export const UPSTREAM_STATUS_QUERY: TypedDocumentNode<{ upstreamStatus: UpstreamStatusFragment }, Record<string, never>> = gql`
  query UpstreamStatus {
    upstreamStatus {
      ...UpstreamStatusFragment
    }
  }
  ${UPSTREAM_STATUS_FRAGMENT}
`;
