import { gql } from '@apollo/client';

export type UpstreamProblem = 'refused' | 'timeout' | 'http_status' | 'unreachable';

export interface UpstreamStatusFragment {
  configured: boolean;
  source: 'none' | 'env' | 'discovered' | 'config';
  answering: boolean;
  checkedAt: string | null;
  discoveryPorts: number[];
  upstreams: { label: string; baseUrl: string; answering: boolean; problem: UpstreamProblem | null; httpStatus: number | null }[];
}

export const UPSTREAM_STATUS_FRAGMENT = gql`
  fragment UpstreamStatusFragment on UpstreamStatus {
    configured
    source
    answering
    checkedAt
    discoveryPorts
    upstreams {
      label
      baseUrl
      answering
      problem
      httpStatus
    }
  }
`;
