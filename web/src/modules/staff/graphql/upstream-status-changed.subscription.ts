import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { UPSTREAM_STATUS_FRAGMENT, type UpstreamStatusFragment } from './upstream-status.fragment.ts';

/** The status at once, then whenever a model server starts or stops answering. */
export const UPSTREAM_STATUS_CHANGED_SUBSCRIPTION: TypedDocumentNode<{ upstreamStatusChanged: UpstreamStatusFragment }, Record<string, never>> = gql`
  subscription UpstreamStatusChanged {
    upstreamStatusChanged {
      ...UpstreamStatusFragment
    }
  }
  ${UPSTREAM_STATUS_FRAGMENT}
`;
