/**
 * The applicant's applications, kept current by `enterpriseApplicationChanged`: Apollo's cache merges a
 * pushed application into the one already shown (same id), and a new one is put at the head of the list,
 * so a decision by staff on any instance turns the page without a reload.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION } from '../graphql/enterprise-application-changed.subscription.ts';
import { MY_ENTERPRISE_APPLICATIONS_QUERY } from '../graphql/my-enterprise-applications.query.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';

export function useMyApplications() {
  const query = useQuery(MY_ENTERPRISE_APPLICATIONS_QUERY, { notifyOnNetworkStatusChange: true });
  const subscription = useSubscription(ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION, {
    onData: ({ client, data }) => {
      const changed = data.data?.enterpriseApplicationChanged;
      if (!changed) return;
      client.cache.updateQuery({ query: MY_ENTERPRISE_APPLICATIONS_QUERY }, (previous) => {
        if (!previous) return previous;
        if (previous.myEnterpriseApplications.some((application) => application.id === changed.id)) return previous;
        return { myEnterpriseApplications: [changed, ...previous.myEnterpriseApplications] };
      });
    },
  });
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.loading ? 'connecting' : 'live';
  return { ...query, live };
}
