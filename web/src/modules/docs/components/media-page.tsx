/** `/docs/media`: images through chat completions (svc-img), speech (svc-tts) and songs (svc-music). */
import { Link } from 'react-router';
import { CodeBlock } from './code-block.tsx';

export function MediaDocsPage() {
  const baseUrl = `${window.location.origin}/v1`;
  return (
    <div className="container page page--docs">
      <title>Images, speech and music · svc</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/docs">Docs</Link>
        </p>
        <h1>Images, speech and music</h1>
        <p className="lead">
          The same API key and the same <code>openai</code> SDK make images, speech and songs. Images come through chat
          completions; speech and songs through the audio endpoint. Both count against your plan's pools, like chat.
        </p>
      </header>

      <section className="section" aria-labelledby="docs-images">
        <h2 id="docs-images">Images: svc-img through chat completions</h2>
        <p>
          Send a chat request with model <code>svc-img</code>. The last user message is the prompt. The reply's text holds
          one Markdown image link per image, which any Markdown renderer shows:
        </p>
        <CodeBlock label="Reply" code={`![A lighthouse at dusk, in watercolour](${window.location.origin}/v1/media/Xq3…Zw.png)`} />
        <p>
          Two optional fields choose what is made: <code>size</code> (<code>"1024x1024"</code> by default, any{' '}
          <code>&lt;width&gt;x&lt;height&gt;</code> from 64 to 4096 pixels a side) and <code>n</code> (1 to 8 images). With{' '}
          <code>stream: true</code> the whole reply arrives as one chunk once the images are ready. Images you put in
          messages are not fetched: only the text of the prompt is used.
        </p>
        <CodeBlock label="Node.js · npm install openai" code={imageNodeSnippet(baseUrl)} />
        <CodeBlock label="Python · pip install openai" code={imagePythonSnippet(baseUrl)} />
        <CodeBlock label="curl" code={imageCurlSnippet(baseUrl)} />
        <p>
          Anyone with a link can open it, and nobody can guess one, so share links only where you mean to. Links work for 30
          days unless this server keeps files for another period.
        </p>
      </section>

      <section className="section" aria-labelledby="docs-speech">
        <h2 id="docs-speech">Speech: svc-tts</h2>
        <p>
          <code>POST /v1/audio/speech</code> takes OpenAI's request: <code>input</code> (up to 4,096 characters),{' '}
          <code>voice</code>, <code>response_format</code> (<code>mp3</code> by default, <code>wav</code>,{' '}
          <code>opus</code>, <code>flac</code> or <code>pcm</code> — 16-bit mono at 24 kHz) and <code>speed</code> (0.25 to
          4). The answer is the audio itself, streamed while it is being made, so playback can start at once.
        </p>
        <p>
          The voices are OpenAI's names (<code>alloy</code>, <code>ash</code>, <code>ballad</code>, <code>coral</code>,{' '}
          <code>echo</code>, <code>fable</code>, <code>nova</code>, <code>onyx</code>, <code>sage</code>,{' '}
          <code>shimmer</code>, <code>verse</code>) and Chinese voices (<code>zh-female</code>, <code>zh-male</code>,{' '}
          <code>yue-female</code>). <code>GET /v1/audio/voices</code> lists them with their language.
        </p>
        <CodeBlock label="Node.js" code={speechNodeSnippet(baseUrl)} />
        <CodeBlock label="Python" code={speechPythonSnippet(baseUrl)} />
        <CodeBlock label="curl" code={speechCurlSnippet(baseUrl)} />
      </section>

      <section className="section" aria-labelledby="docs-music">
        <h2 id="docs-music">Songs: svc-music</h2>
        <p>
          The same endpoint with model <code>svc-music</code>: <code>input</code> describes the song (style, mood, lyrics)
          and <code>duration</code> sets its length in seconds — 30 when you leave it out, at most 240 unless this server
          allows another limit. No voice is needed.
        </p>
        <CodeBlock label="curl" code={musicCurlSnippet(baseUrl)} />
      </section>

      <section className="section callout">
        <h2>What it costs</h2>
        <p>
          Media is billed as tokens at the model's price on the <Link to="/pricing">pricing page</Link>. The prompt or text
          counts as input. As output, by default, an image counts 1,000 tokens per 1024×1024 pixels (a 512×512 image 250),
          and audio 25 tokens a second. Before the request runs, the most it could use (every image of the size you asked
          for, or the full duration) is set aside from your pools; you pay for what was delivered, and nothing if it fails.
          Your <Link to="/account/usage">usage page</Link> shows each request with the images or seconds it made.
        </p>
      </section>
    </div>
  );
}

function imageNodeSnippet(baseUrl: string): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_API_KEY });

const completion = await client.chat.completions.create({
  model: 'svc-img',
  messages: [{ role: 'user', content: 'A lighthouse at dusk, in watercolour' }],
  // @ts-expect-error svc-img takes a size; the SDK's types do not list it
  size: '1536x1024',
  n: 2,
});
console.log(completion.choices[0].message.content); // ![A lighthouse at dusk, in watercolour](…/v1/media/….png) ×2`;
}

function imagePythonSnippet(baseUrl: string): string {
  return `import os
from openai import OpenAI

client = OpenAI(base_url="${baseUrl}", api_key=os.environ["SVC_API_KEY"])

completion = client.chat.completions.create(
    model="svc-img",
    messages=[{"role": "user", "content": "A lighthouse at dusk, in watercolour"}],
    n=2,
    extra_body={"size": "1536x1024"},
)
print(completion.choices[0].message.content)`;
}

function imageCurlSnippet(baseUrl: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "svc-img",
    "size": "1024x1024",
    "messages": [{"role": "user", "content": "A lighthouse at dusk"}]
  }'`;
}

function speechNodeSnippet(baseUrl: string): string {
  return `import { writeFile } from 'node:fs/promises';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_API_KEY });

const speech = await client.audio.speech.create({
  model: 'svc-tts',
  voice: 'nova',
  input: 'Good evening, and welcome to the news.',
  response_format: 'mp3',
});
await writeFile('news.mp3', Buffer.from(await speech.arrayBuffer()));`;
}

function speechPythonSnippet(baseUrl: string): string {
  return `import os
from openai import OpenAI

client = OpenAI(base_url="${baseUrl}", api_key=os.environ["SVC_API_KEY"])

with client.audio.speech.with_streaming_response.create(
    model="svc-tts",
    voice="nova",
    input="Good evening, and welcome to the news.",
) as response:
    response.stream_to_file("news.mp3")`;
}

function speechCurlSnippet(baseUrl: string): string {
  return `curl ${baseUrl}/audio/speech \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "svc-tts", "voice": "alloy", "input": "Hello from svc.",
       "response_format": "wav"}' \\
  --output hello.wav

curl ${baseUrl}/audio/voices -H "Authorization: Bearer $SVC_API_KEY"`;
}

function musicCurlSnippet(baseUrl: string): string {
  return `curl ${baseUrl}/audio/speech \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "svc-music", "duration": 45,
       "input": "A calm piano piece for a rainy afternoon"}' \\
  --output song.mp3`;
}
