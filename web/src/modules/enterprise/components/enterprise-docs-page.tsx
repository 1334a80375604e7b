/**
 * `/docs/enterprise`: applying, what review looks at, minting and rotating `svc_ent_` keys, the
 * connecting-IP audit, allow-lists and the organisation's pools, with samples to copy.
 */
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CodeBlock } from '../../docs/components/code-block.tsx';

export function EnterpriseDocsPage() {
  const { t } = useTranslation(['enterprise', 'shell']);
  const origin = window.location.origin;
  const baseUrl = `${origin}/v1`;
  const prompt = JSON.stringify(t('docs.samplePrompt'));
  const code = <code />;
  const components = { code, apply: <Link to="/enterprise/apply" />, console: <Link to="/enterprise/console" />, pricing: <Link to="/pricing" />, quickStart: <Link to="/docs" /> };
  return (
    <div className="container page page--docs">
      <title>{t('shell:pageTitle', { page: t('docs.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/docs">{t('docs.eyebrow')}</Link>
        </p>
        <h1>{t('docs.title')}</h1>
        <p className="lead">
          <Trans t={t} i18nKey="docs.lead" components={components} />
        </p>
      </header>

      <nav className="docs-toc" aria-label={t('docs.tocLabel')}>
        <ol>
          {(['apply', 'review', 'keys', 'rotate', 'ip-audit', 'allow-list', 'pools'] as const).map((anchor) => (
            <li key={anchor}>
              <a href={`#${anchor}`}>{t(`docs.toc.${anchor}`)}</a>
            </li>
          ))}
        </ol>
      </nav>

      <section className="section" id="apply" aria-labelledby="docs-apply">
        <h2 id="docs-apply">{t('docs.apply.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="docs.apply.body" components={components} />
        </p>
        <ul className="docs-list">
          <li>
            <Trans t={t} i18nKey="docs.apply.commercial" components={components} />
          </li>
          <li>
            <Trans t={t} i18nKey="docs.apply.enterprise" components={components} />
          </li>
        </ul>
        <p>{t('docs.apply.after')}</p>
      </section>

      <section className="section" id="review" aria-labelledby="docs-review">
        <h2 id="docs-review">{t('docs.review.heading')}</h2>
        <p>{t('docs.review.body')}</p>
        <ul className="docs-list">
          <li>{t('docs.review.who')}</li>
          <li>{t('docs.review.what')}</li>
          <li>{t('docs.review.volume')}</li>
          <li>{t('docs.review.account')}</li>
        </ul>
        <p>{t('docs.review.outcome')}</p>
      </section>

      <section className="section" id="keys" aria-labelledby="docs-keys">
        <h2 id="docs-keys">{t('docs.keys.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="docs.keys.body" components={components} />
        </p>
        <CodeBlock label={t('docs.labels.shell')} code={'export SVC_ENT_KEY="svc_ent_…"'} />
        <CodeBlock label={t('docs.labels.curl')} code={curlSnippet(baseUrl, prompt)} />
        <CodeBlock label={t('docs.labels.python')} install="pip install openai" code={pythonSnippet(baseUrl, prompt)} />
        <CodeBlock label={t('docs.labels.node')} install="npm install openai" code={nodeSnippet(baseUrl, prompt)} />
        <p>
          <Trans t={t} i18nKey="docs.keys.models" components={components} />
        </p>
        <CodeBlock label={t('docs.labels.curl')} code={`curl ${baseUrl}/models -H "Authorization: Bearer $SVC_ENT_KEY"`} />
      </section>

      <section className="section" id="rotate" aria-labelledby="docs-rotate">
        <h2 id="docs-rotate">{t('docs.rotate.heading')}</h2>
        <ol className="docs-list">
          <li>
            <Trans t={t} i18nKey="docs.rotate.step1" components={components} />
          </li>
          <li>{t('docs.rotate.step2')}</li>
          <li>{t('docs.rotate.step3')}</li>
          <li>{t('docs.rotate.step4')}</li>
        </ol>
        <p>{t('docs.rotate.note')}</p>
      </section>

      <section className="section" id="ip-audit" aria-labelledby="docs-ip-audit">
        <h2 id="docs-ip-audit">{t('docs.ipAudit.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="docs.ipAudit.body" components={components} />
        </p>
        <p>
          <Trans t={t} i18nKey="docs.ipAudit.proxies" components={components} />
        </p>
        <CodeBlock label={t('docs.labels.curl')} code={connectionsSnippet(origin)} />
      </section>

      <section className="section" id="allow-list" aria-labelledby="docs-allow-list">
        <h2 id="docs-allow-list">{t('docs.allowList.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="docs.allowList.body" components={components} />
        </p>
        <CodeBlock label={t('docs.labels.curl')} code={createKeySnippet(origin)} />
        <p>
          <Trans t={t} i18nKey="docs.allowList.refused" components={components} />
        </p>
      </section>

      <section className="section callout" id="pools" aria-labelledby="docs-pools">
        <h2 id="docs-pools">{t('docs.pools.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="docs.pools.body" components={components} />
        </p>
      </section>
    </div>
  );
}

function curlSnippet(baseUrl: string, prompt: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_ENT_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "auto", "messages": [{"role": "user", "content": ${prompt}}]}'`;
}

function pythonSnippet(baseUrl: string, prompt: string): string {
  return `import os
from openai import OpenAI

client = OpenAI(base_url="${baseUrl}", api_key=os.environ["SVC_ENT_KEY"])

completion = client.chat.completions.create(
    model="auto",
    messages=[{"role": "user", "content": ${prompt}}],
)
print(completion.choices[0].message.content)`;
}

function nodeSnippet(baseUrl: string, prompt: string): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_ENT_KEY });

const completion = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: ${prompt} }],
});
console.log(completion.choices[0].message.content);`;
}

function connectionsSnippet(origin: string): string {
  return `# From a signed-in browser session (cookie), as the console does:
curl ${origin}/api/membership/enterprise/organisations \\
  -b "svc_membership_session=$SESSION"
curl ${origin}/api/membership/enterprise/organisations/$ORG_ID/connections \\
  -b "svc_membership_session=$SESSION"`;
}

function createKeySnippet(origin: string): string {
  return `curl ${origin}/api/membership/enterprise/organisations/$ORG_ID/keys \\
  -b "svc_membership_session=$SESSION" \\
  -H "Origin: ${origin}" \\
  -H "Content-Type: application/json" \\
  -d '{"name": "batch-worker", "allowedCidrs": ["203.0.113.0/24", "2001:db8::/32"]}'`;
}
