/**
 * The domain services, built once per app and shared by every transport (REST, GraphQL, the gateway).
 * A new domain adds its service here.
 */
import type { Config } from './config/config.ts';
import type { Database } from './db/orm.ts';
import type { RedisLayer } from './infra/redis.ts';
import type { Logger } from 'pino';
import { AccountService } from './modules/account/account.service.ts';
import { Mailer } from './modules/account/mailer.ts';
import { OidcService } from './modules/account/oidc.service.ts';
import { ApiKeyService } from './modules/api-key/api-key.service.ts';
import { DeviceAuthService } from './modules/device-auth/device-auth.service.ts';
import { IdentityService } from './modules/identity/identity.service.ts';
import { LastUsedRecorder } from './modules/identity/last-used.ts';
import { SessionService } from './modules/session/session.service.ts';
import { Throttle } from './modules/rate-limit/throttle.ts';
import { ModelCatalogue } from './modules/model/model.service.ts';
import { PlanService } from './modules/plan/plan.service.ts';
import { RateLimiter } from './modules/rate-limit/rate-limit.service.ts';
import { UsageService } from './modules/usage/usage.service.ts';
import { AuditLog } from './modules/audit/audit.service.ts';
import { PlanAssignments } from './modules/plan/plan-assignment.service.ts';
import { StaffService } from './modules/staff/staff.service.ts';

export interface Services {
  config: Config;
  db: Database;
  redis: RedisLayer;
  models: ModelCatalogue;
  plans: PlanService;
  /** GCRA limiter (Redis, or in process in single-instance mode); see rate-limit.service.ts. */
  rateLimits: RateLimiter;
  /** Usage pools (limits per plan package, used/reserved per window) and the usage report. */
  usage: UsageService;
  /** Bearer and cookie authentication with the credential cache: `identity.authenticateBearer(header)`. */
  identity: IdentityService;
  /** Sign-up, password and email-code sign-in, the admin bootstrap: `accounts.signUp({ email, password })`. */
  accounts: AccountService;
  sessions: SessionService;
  /** Personal keys: `apiKeys.createForAccount(accountId, { name })` returns `{ key, token }`. */
  apiKeys: ApiKeyService;
  deviceAuth: DeviceAuthService;
  oidc: OidcService;
  mailer: Mailer;
  /** Batched `lastUsedAt` writes; flushed on close. */
  lastUsed: LastUsedRecorder;
  /** The append-only audit log: `audit.record(entry, em)` inside the transaction of the change. */
  audit: AuditLog;
  /** Which package an account is on: `planAssignments.assign(actor, …)` (staff), `.assignAsSystem(…)` (payments). */
  planAssignments: PlanAssignments;
  /** Staff actions on accounts: disable/enable, end sessions, set role and package. */
  staff: StaffService;
}

export function createServices(config: Config, db: Database, redis: RedisLayer, log: Logger): Services {
  const rateLimits = new RateLimiter(redis);
  const throttle = new Throttle(redis, rateLimits);
  const lastUsed = new LastUsedRecorder(db, { onError: (error) => log.warn({ err: (error as Error).message }, 'could not record credential use') });
  const identity = new IdentityService(config, db, redis, lastUsed);
  const mailer = new Mailer(config, log);
  const accounts = new AccountService(config, db, throttle, mailer, identity);
  const sessions = new SessionService(config, db, identity);
  const plans = new PlanService(config);
  const usage = new UsageService(config, db, redis, (error) => log.warn({ err: (error as Error).message }, 'usage event fan-out failed'));
  const audit = new AuditLog(db);
  const planAssignments = new PlanAssignments(config, db, { plans, audit, identity, usage: usage.events }, (error) =>
    log.warn({ err: (error as Error).message }, 'plan package expiry failed'),
  );
  return {
    config,
    db,
    redis,
    models: new ModelCatalogue(config),
    plans,
    rateLimits,
    usage,
    identity,
    accounts,
    sessions,
    apiKeys: new ApiKeyService(db, identity, audit),
    deviceAuth: new DeviceAuthService(config, db, throttle, sessions, accounts),
    oidc: new OidcService(config, redis),
    mailer,
    lastUsed,
    audit,
    planAssignments,
    staff: new StaffService(db, { audit, identity, planAssignments }),
  };
}
