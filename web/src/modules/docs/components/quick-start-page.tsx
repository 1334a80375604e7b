import { Link } from 'react-router';
import { CodeBlock } from './code-block.tsx';

export function QuickStartPage() {
  const baseUrl = `${window.location.origin}/v1`;
  return (
    <div className="container page page--docs">
      <title>Quick start · svc</title>
      <header className="page-header">
        <p className="eyebrow">Docs</p>
        <h1>Quick start</h1>
        <p className="lead">
          svc speaks the OpenAI chat-completions API, so you use the official <code>openai</code> SDK and change two
          things: the base URL and the key.
        </p>
      </header>

      <ol className="steps">
        <li>
          <h2>Create an API key</h2>
          <p>
            Sign in at <Link to="/account">/account</Link> and create a personal API key. It starts with{' '}
            <code>svc_live_</code> and is shown once, so store it right away, for example as an environment variable:
          </p>
          <CodeBlock label="Shell" code={'export SVC_API_KEY="svc_live_…"'} />
        </li>
        <li>
          <h2>Point the SDK at svc</h2>
          <p>
            The base URL of this server is <code>{baseUrl}</code>.
          </p>
          <CodeBlock label="Node.js · npm install openai" code={nodeSnippet(baseUrl)} />
          <CodeBlock label="Python · pip install openai" code={pythonSnippet(baseUrl)} />
          <CodeBlock label="curl" code={curlSnippet(baseUrl)} />
        </li>
        <li>
          <h2>Pick a model</h2>
          <p>
            <code>auto</code> picks a fast model for you. Every model id, what it is for and its price per million tokens
            are on the <Link to="/pricing">pricing page</Link>. Usage counts against your plan's daily, weekly and monthly
            pools.
          </p>
        </li>
      </ol>

      <section className="section">
        <h2>Images, speech and music</h2>
        <p>
          <code>svc-img</code> makes images through chat completions, <code>svc-tts</code> speaks and{' '}
          <code>svc-music</code> writes songs through <code>/v1/audio/speech</code>: see{' '}
          <Link to="/docs/media">Images, speech and music</Link>.
        </p>
      </section>

      <section className="section callout">
        <h2>When something goes wrong</h2>
        <p>
          Errors come back in the OpenAI shape with a stable <code>code</code> (for example <code>sign_in_required</code>{' '}
          or <code>quota_exceeded</code>) and a request id in the <code>x-svc-request-id</code> header. Quote that id when
          you ask for help.
        </p>
      </section>
    </div>
  );
}

function nodeSnippet(baseUrl: string): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: '${baseUrl}',
  apiKey: process.env.SVC_API_KEY,
});

const completion = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: 'Say hello in one sentence.' }],
});
console.log(completion.choices[0].message.content);

// Streaming works the same way:
const stream = await client.chat.completions.create({
  model: 'auto',
  messages: [{ role: 'user', content: 'Count to five.' }],
  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`;
}

function pythonSnippet(baseUrl: string): string {
  return `import os
from openai import OpenAI

client = OpenAI(
    base_url="${baseUrl}",
    api_key=os.environ["SVC_API_KEY"],
)

completion = client.chat.completions.create(
    model="auto",
    messages=[{"role": "user", "content": "Say hello in one sentence."}],
)
print(completion.choices[0].message.content)`;
}

function curlSnippet(baseUrl: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "auto", "messages": [{"role": "user", "content": "Say hello."}]}'`;
}
