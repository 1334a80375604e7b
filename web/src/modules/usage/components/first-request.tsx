import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CodeBlock } from '../../docs/components/code-block.tsx';
import { EmptyState } from '../../shell/components/query-state.tsx';

/** The empty history: what to run to see the first request (and its cost) appear here. */
export function FirstRequest() {
  const { t } = useTranslation('usage');
  const baseUrl = `${window.location.origin}/v1`;
  // The sample's message is in the reader's language; JSON.stringify keeps it a valid string literal.
  const prompt = JSON.stringify(t('first.prompt'));
  return (
    <EmptyState title={t('first.title')}>
      <p>
        <Trans t={t} i18nKey="first.body" values={{ url: baseUrl }} components={{ account: <Link to="/account" />, code: <code /> }} />
      </p>
      <CodeBlock
        label={t('first.curl')}
        code={`curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "auto", "messages": [{"role": "user", "content": ${prompt}}]}'`}
      />
      <CodeBlock
        label={t('first.node')}
        install="npm install openai"
        code={`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_API_KEY });
const completion = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: ${prompt} }],
});
console.log(completion.choices[0].message.content);`}
      />
    </EmptyState>
  );
}
