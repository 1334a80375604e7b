/** `/account/usage`: the member's pools drawn live, and their recent requests with what each cost. */
import { useEffect, useId, useState } from 'react';
import { Link } from 'react-router';
import { useMe } from '../../account/hooks/use-me.ts';
import { classLabels, modelClasses } from '../../plan/components/plan-labels.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import type { UsageFragment } from '../graphql/usage.fragment.ts';
import { useLiveUsage, type LiveStatus } from '../hooks/use-live-usage.ts';
import { FirstRequest } from './first-request.tsx';
import { PoolGauge } from './pool-gauge.tsx';
import { UsageHistoryTable } from './usage-history-table.tsx';
import './usage.css';

export function UsagePage() {
  const { me, loading, error, retry } = useMe();
  return (
    <div className="container page">
      <title>Usage · svc</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account">Account</Link>
        </p>
        <h1>Usage</h1>
      </header>
      {error ? (
        <ErrorState title="Your account could not be loaded." error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label="Checking your session…" />
      ) : me === null ? (
        <div className="state state--empty usage-sign-in">
          <p className="state__title">Sign in to see your usage</p>
          <p>Your pools and the cost of every request you make are shown here once you are signed in.</p>
          <Link className="button" to="/account">
            Sign in or create an account
          </Link>
        </div>
      ) : (
        <LiveUsage />
      )}
    </div>
  );
}

function LiveUsage() {
  const id = useId();
  const state = useLiveUsage();
  const now = useMinuteClock();
  const { usage, history } = state;
  return (
    <>
      <section className="section" aria-labelledby={`${id}-pools`}>
        <div className="section__head usage-head">
          <div>
            <h2 id={`${id}-pools`}>Pools</h2>
            {usage && <PoolsSummary usage={usage} />}
          </div>
          <LiveBadge status={state.live} />
        </div>
        {state.usageError && !usage ? (
          <ErrorState title="Your pools could not be loaded." error={state.usageError} onRetry={state.retry} retrying={state.usageLoading} />
        ) : !usage ? (
          <LoadingState label="Loading your pools…" />
        ) : (
          <div className="usage-classes">
            {modelClasses.map((cls) => (
              <section key={cls} className={`usage-class usage-class--${cls}`} aria-label={`${classLabels[cls]} pools`}>
                <h3>{classLabels[cls]} models</h3>
                <div className="gauges">
                  {usage.pools
                    .filter((pool) => pool.class === cls)
                    .map((pool) => (
                      <PoolGauge key={pool.window} pool={pool} timezone={usage.timezone} now={now} />
                    ))}
                </div>
              </section>
            ))}
          </div>
        )}
      </section>

      <section className="section" aria-labelledby={`${id}-history`}>
        <div className="section__head">
          <h2 id={`${id}-history`}>Recent requests</h2>
          <p className="muted">Newest first. Costs are at your effective prices and count against the pools above.</p>
        </div>
        {state.historyError && !history ? (
          <ErrorState title="Your recent requests could not be loaded." error={state.historyError} onRetry={state.retry} retrying={state.historyLoading} />
        ) : !history ? (
          <LoadingState label="Loading your recent requests…" />
        ) : history.nodes.length === 0 ? (
          <FirstRequest />
        ) : (
          <>
            <UsageHistoryTable nodes={history.nodes} />
            {history.pageInfo.hasNextPage && (
              <div className="actions usage-more">
                <button type="button" className="button button--ghost" onClick={state.loadOlder} disabled={state.loadingOlder}>
                  {state.loadingOlder ? 'Loading…' : 'Show older requests'}
                </button>
              </div>
            )}
          </>
        )}
      </section>
    </>
  );
}

function PoolsSummary({ usage }: { usage: UsageFragment }) {
  return (
    <p className="muted">
      Plan <span className="badge">{usage.packageId}</span> · amounts in {usage.currency} · windows follow <strong>{usage.timezone}</strong> time (weeks
      start on Monday). <Link to="/pricing">Compare plans</Link>
    </p>
  );
}

const liveLabels: Record<LiveStatus, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  interrupted: 'Reconnecting…',
};

function LiveBadge({ status }: { status: LiveStatus }) {
  return (
    <span className={`live live--${status}`} role="status" title={status === 'live' ? 'Updates as your requests are admitted and settled' : undefined}>
      <span className="live__dot" aria-hidden="true" />
      {liveLabels[status]}
    </span>
  );
}

/** Now, refreshed every minute, for "resets in …". */
function useMinuteClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
