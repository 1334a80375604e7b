import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CodeBlock } from './code-block.tsx';

export function QuickStartPage() {
  const { t } = useTranslation(['docs', 'shell']);
  const baseUrl = `${window.location.origin}/v1`;
  // Sample prompts are in the reader's language; JSON.stringify keeps each a valid string literal.
  const prompts = {
    hello: JSON.stringify(t('sdk.prompt')),
    count: JSON.stringify(t('sdk.streamPrompt')),
    curl: JSON.stringify(t('sdk.curlPrompt')),
    streaming: t('sdk.streamingComment'),
  };
  const code = <code />;
  return (
    <div className="container page page--docs">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <p className="eyebrow">{t('eyebrow')}</p>
        <h1>{t('title')}</h1>
        <p className="lead">
          <Trans t={t} i18nKey="lead" components={{ code }} />
        </p>
      </header>

      <ol className="steps">
        <li>
          <h2>{t('key.heading')}</h2>
          <p>
            <Trans t={t} i18nKey="key.body" components={{ code, account: <Link to="/account" /> }} />
          </p>
          <CodeBlock label={t('key.shell')} code={'export SVC_API_KEY="svc_live_…"'} />
        </li>
        <li>
          <h2>{t('sdk.heading')}</h2>
          <p>
            <Trans t={t} i18nKey="sdk.body" values={{ url: baseUrl }} components={{ code }} />
          </p>
          <CodeBlock label={t('sdk.node')} install="npm install openai" code={nodeSnippet(baseUrl, prompts)} />
          <CodeBlock label={t('sdk.python')} install="pip install openai" code={pythonSnippet(baseUrl, prompts)} />
          <CodeBlock label={t('sdk.curl')} code={curlSnippet(baseUrl, prompts)} />
        </li>
        <li>
          <h2>{t('model.heading')}</h2>
          <p>
            <Trans t={t} i18nKey="model.body" components={{ code, pricing: <Link to="/pricing" /> }} />
          </p>
        </li>
      </ol>

      <section className="section">
        <h2>{t('media.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="media.body" components={{ code, media: <Link to="/docs/media" /> }} />
        </p>
      </section>

      <section className="section">
        <h2>{t('search.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="search.body" components={{ code, search: <Link to="/docs/search" /> }} />
        </p>
      </section>

      <section className="section callout">
        <h2>{t('errors.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="errors.body" components={{ code }} />
        </p>
      </section>
    </div>
  );
}

interface Prompts {
  hello: string;
  count: string;
  curl: string;
  streaming: string;
}

function nodeSnippet(baseUrl: string, prompts: Prompts): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: '${baseUrl}',
  apiKey: process.env.SVC_API_KEY,
});

const completion = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: ${prompts.hello} }],
});
console.log(completion.choices[0].message.content);

// ${prompts.streaming}
const stream = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: ${prompts.count} }],
  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`;
}

function pythonSnippet(baseUrl: string, prompts: Prompts): string {
  return `import os
from openai import OpenAI

client = OpenAI(
    base_url="${baseUrl}",
    api_key=os.environ["SVC_API_KEY"],
)

completion = client.chat.completions.create(
    model="auto",
    messages=[{"role": "user", "content": ${prompts.hello}}],
)
print(completion.choices[0].message.content)`;
}

function curlSnippet(baseUrl: string, prompts: Prompts): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "auto", "messages": [{"role": "user", "content": ${prompts.curl}}]}'`;
}
