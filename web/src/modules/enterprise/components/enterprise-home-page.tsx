/** `/enterprise`: to the console for members of an organisation, to the application form for everyone else. */
import { useQuery } from '@apollo/client/react';
import { useTranslation } from 'react-i18next';
import { Navigate } from 'react-router';
import { useMe } from '../../account/hooks/use-me.ts';
import { LoadingState } from '../../shell/components/query-state.tsx';
import { ORGANISATIONS_QUERY } from '../graphql/organisations.query.ts';

export function EnterpriseHomePage() {
  const { t } = useTranslation('enterprise');
  const { me } = useMe();
  const organisations = useQuery(ORGANISATIONS_QUERY, { skip: !me });
  if (me === null || organisations.error) return <Navigate to="/enterprise/apply" replace />;
  if (me === undefined || !organisations.data)
    return (
      <div className="container page">
        <LoadingState label={t('checkingSession')} />
      </div>
    );
  return <Navigate to={organisations.data.organisations.length > 0 ? '/enterprise/console' : '/enterprise/apply'} replace />;
}
