import { Link } from 'react-router';
import { CodeBlock } from '../../docs/components/code-block.tsx';
import { EmptyState } from '../../shell/components/query-state.tsx';

/** The empty history: what to run to see the first request (and its cost) appear here. */
export function FirstRequest() {
  const baseUrl = `${window.location.origin}/v1`;
  return (
    <EmptyState title="No requests yet — here is how to make your first one">
      <p>
        Create a key on your <Link to="/account">account page</Link>, then call the API at <code>{baseUrl}</code>. The request shows up here, with its
        cost, as soon as it finishes — no reload needed.
      </p>
      <CodeBlock
        label="curl"
        code={`curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "auto", "messages": [{"role": "user", "content": "Say hello."}]}'`}
      />
      <CodeBlock
        label="Node.js · npm install openai"
        code={`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_API_KEY });
const completion = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: 'Say hello.' }],
});
console.log(completion.choices[0].message.content);`}
      />
    </EmptyState>
  );
}
