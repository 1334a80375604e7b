/**
 * Enterprise steps for tests, over the app's own HTTP and GraphQL like the web app: apply (a commercial
 * application makes the organisation at once), mint an `svc_ent_` key, invite a member.
 *
 *   const owner = await seed(app).member();
 *   const application = await applyFor(owner, { kind: 'commercial' });   // application.organisationId
 *   const token = await organisationKey(owner, application.organisationId!);
 */
import type { GraphQLResult } from './browser.ts';
import type { Person } from './seed.ts';

export interface AppliedApplication {
  id: string;
  state: string;
  autoApproved: boolean;
  organisationId: string | null;
  packageId: string | null;
}

export function applicationInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'commercial',
    organisation: `Acme ${Math.random().toString(36).slice(2, 10)}`,
    contactEmail: 'ops@acme.example',
    website: 'https://acme.example',
    country: 'DE',
    useCase: 'Customer support drafts and internal search over our manuals.',
    expectedMonthlyTokens: 50_000_000,
    ...overrides,
  };
}

/** Submits an application as `person` (commercial unless `kind` says otherwise); the raw GraphQL answer. */
export function submitApplication(person: Person, overrides: Record<string, unknown> = {}): Promise<GraphQLResult<{ submitEnterpriseApplication: AppliedApplication }>> {
  return person.web.graphql<{ submitEnterpriseApplication: AppliedApplication }>(
    'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { id state autoApproved organisationId packageId } }',
    { input: applicationInput(overrides) },
  );
}

/** Submits an application that must succeed. */
export async function applyFor(person: Person, overrides: Record<string, unknown> = {}): Promise<AppliedApplication> {
  const result = await submitApplication(person, overrides);
  if (result.errors) throw new Error(`application refused: ${JSON.stringify(result.errors)}`);
  return result.data!.submitEnterpriseApplication;
}

/** Mints an organisation key as its owner or an admin; the token. */
export async function organisationKey(person: Person, organisationId: string): Promise<string> {
  const response = await person.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`, { body: { name: 'backend' } });
  if (response.status !== 201) throw new Error(`key refused: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** Adds `member` (made verified) to the organisation with `role`, as its owner. */
export async function addMember(owner: Person, organisationId: string, member: Person, role: 'admin' | 'member', verify: (accountId: string) => Promise<unknown>): Promise<void> {
  await verify(member.id);
  const invited = await owner.web.graphql('mutation($org: ID!, $email: String!, $role: OrganisationInvitationRole) { inviteOrganisationMember(organisationId: $org, email: $email, role: $role) { member { role } } }', {
    org: organisationId,
    email: member.email,
    role,
  });
  if (invited.errors) throw new Error(`invitation refused: ${JSON.stringify(invited.errors)}`);
}
