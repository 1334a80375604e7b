/**
 * An enterprise application as callers see it, from the entity or from a raw row of the staff queue's
 * keyset query, and the cursors of that queue.
 */
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { ApplicationKind, ApplicationState, IEnterpriseApplication } from './enterprise.entity.ts';

export interface ApplicationView {
  id: string;
  /** The applicant. */
  accountId: string;
  kind: ApplicationKind;
  organisation: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
  state: ApplicationState;
  autoApproved: boolean;
  /** The organisation the approval created; null until approved. */
  organisationId: string | null;
  /** The package the organisation was given at approval. */
  packageId: string | null;
  submittedAt: Date;
  updatedAt: Date;
  decidedAt: Date | null;
  /** The approval note or the rejection reason (shown to the applicant). */
  decisionNote: string | null;
}

export interface ApplicationPage {
  nodes: ApplicationView[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** `enterprise_application` as raw SQL returns it. */
export interface ApplicationRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  account_id: string;
  kind: ApplicationKind;
  organisation: string;
  contact_email: string;
  website: string | null;
  country: string;
  use_case: string;
  expected_monthly_tokens: string | number;
  state: ApplicationState;
  auto_approved: boolean;
  organisation_id: string | null;
  package_id: string | null;
  decided_at: Date | null;
  decision_note: string | null;
}

export function applicationView(row: IEnterpriseApplication): ApplicationView {
  return {
    id: row.id,
    accountId: row.accountId,
    kind: row.kind,
    organisation: row.organisation,
    contactEmail: row.contactEmail,
    website: row.website ?? null,
    country: row.country,
    useCase: row.useCase,
    expectedMonthlyTokens: Number(row.expectedMonthlyTokens),
    state: row.state,
    autoApproved: row.autoApproved,
    organisationId: row.organisationId ?? null,
    packageId: row.packageId ?? null,
    submittedAt: row.createdAt,
    updatedAt: row.updatedAt,
    decidedAt: row.decidedAt ?? null,
    decisionNote: row.decisionNote ?? null,
  };
}

export function rowView(row: ApplicationRow): ApplicationView {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    organisation: row.organisation,
    contactEmail: row.contact_email,
    website: row.website,
    country: row.country,
    useCase: row.use_case,
    expectedMonthlyTokens: Number(row.expected_monthly_tokens),
    state: row.state,
    autoApproved: row.auto_approved,
    organisationId: row.organisation_id,
    packageId: row.package_id,
    submittedAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    decidedAt: row.decided_at ? new Date(row.decided_at) : null,
    decisionNote: row.decision_note,
  };
}

export function encodeCursor(createdUs: string, id: string): string {
  return Buffer.from(`application:${createdUs}:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdUs: string; id: string } {
  const match = /^application:(\d{1,16}):([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match || !isUuid(match[2]!)) throw new AppError('invalid_request', bilingual('after is not a cursor this API returned.', 'after 不是本接口返回的游标。'), { param: 'after' });
  return { createdUs: match[1]!, id: match[2]! };
}
