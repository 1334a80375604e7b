/**
 * `/docs/search`: hosted web search from the OpenAI SDK (svc-2.1-search), from MCP clients (svc's
 * Streamable HTTP server) and from curl (the REST tool call), with the svc.search.v1 form and its cost.
 * Code samples carry this server's own addresses; product and file names stay as they are in every language.
 */
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CodeBlock } from '../../docs/components/code-block.tsx';

export function SearchDocsPage() {
  const { t } = useTranslation(['search', 'shell']);
  const origin = window.location.origin;
  const baseUrl = `${origin}/v1`;
  const mcpUrl = `${baseUrl}/mcp`;
  const schemaUrl = `${baseUrl}/schemas/svc.search.v1.json`;
  // The sample query is in the reader's language; JSON.stringify keeps it a valid string literal.
  const query = JSON.stringify(t('sdk.query'));
  const code = <code />;
  return (
    <div className="container page page--docs">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/docs">{t('eyebrow')}</Link>
        </p>
        <h1>{t('title')}</h1>
        <p className="lead">
          <Trans t={t} i18nKey="lead" components={{ code }} />
        </p>
      </header>

      <section className="section" aria-labelledby="search-sdk">
        <h2 id="search-sdk">{t('sdk.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="sdk.body" components={{ code }} />
        </p>
        <CodeBlock label="Node.js" install="npm install openai" code={nodeSnippet(baseUrl, query)} />
        <CodeBlock label="Python" install="pip install openai" code={pythonSnippet(baseUrl, query)} />
      </section>

      <section className="section" aria-labelledby="search-mcp">
        <h2 id="search-mcp">{t('mcp.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="mcp.body" values={{ url: mcpUrl }} components={{ code }} />
        </p>
        <p>{t('mcp.clients')}</p>
        <CodeBlock label="Claude Code" code={claudeCodeSnippet(mcpUrl)} />
        <CodeBlock label="Cursor" install="~/.cursor/mcp.json" code={cursorSnippet(mcpUrl)} />
        <CodeBlock label="VS Code" install=".vscode/mcp.json" code={vscodeSnippet(mcpUrl)} />
        <CodeBlock label="Codex" install="~/.codex/config.toml" code={codexSnippet(mcpUrl)} />
        <p>
          <Trans t={t} i18nKey="mcp.oauth" components={{ account: <Link to="/account" /> }} />
        </p>
        <CodeBlock label="OAuth" code={oauthSnippet(mcpUrl)} />
        <p>{t('mcp.sdkClient')}</p>
        <CodeBlock label="Node.js" install="npm install @modelcontextprotocol/sdk" code={mcpSdkSnippet(mcpUrl, query)} />
        <p>
          <Trans t={t} i18nKey="mcp.failures" components={{ code }} />
        </p>
      </section>

      <section className="section" aria-labelledby="search-rest">
        <h2 id="search-rest">{t('rest.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="rest.body" components={{ code }} />
        </p>
        <CodeBlock label="curl" code={restSnippet(baseUrl, query)} />
        <p>{t('rest.chat')}</p>
        <CodeBlock label="curl" code={chatCurlSnippet(baseUrl, query)} />
      </section>

      <section className="section" aria-labelledby="search-output">
        <h2 id="search-output">{t('output.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="output.body" values={{ schema: schemaUrl }} components={{ code, schema: <a href={schemaUrl} /> }} />
        </p>
        <CodeBlock label="JSON" code={outputSample()} />
      </section>

      <section className="section callout">
        <h2>{t('cost.heading')}</h2>
        <p>
          <Trans t={t} i18nKey="cost.body" components={{ code, pricing: <Link to="/pricing" />, usage: <Link to="/account/usage" /> }} />
        </p>
      </section>
    </div>
  );
}

function nodeSnippet(baseUrl: string, query: string): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.SVC_API_KEY });

const completion = await client.chat.completions.create({
  model: 'svc-2.1-search',
  messages: [{ role: 'user', content: ${query} }],
});
const message = completion.choices[0].message;
const search = JSON.parse(message.content); // svc.search.v1
for (const result of search.results) console.log(result.rank, result.title, result.url);
// The same sources as annotations:
for (const { url_citation } of message.annotations ?? []) console.log(url_citation.url);`;
}

function pythonSnippet(baseUrl: string, query: string): string {
  return `import json, os
from openai import OpenAI

client = OpenAI(base_url="${baseUrl}", api_key=os.environ["SVC_API_KEY"])

completion = client.chat.completions.create(
    model="svc-2.1-search",
    messages=[{"role": "user", "content": ${query}}],
)
search = json.loads(completion.choices[0].message.content)  # svc.search.v1
for result in search["results"]:
    print(result["rank"], result["title"], result["url"])`;
}

function claudeCodeSnippet(mcpUrl: string): string {
  return `claude mcp add --transport http svc ${mcpUrl} \\
  --header "Authorization: Bearer $SVC_API_KEY"`;
}

function cursorSnippet(mcpUrl: string): string {
  return `{
  "mcpServers": {
    "svc": {
      "url": "${mcpUrl}",
      "headers": { "Authorization": "Bearer \${env:SVC_API_KEY}" }
    }
  }
}`;
}

function vscodeSnippet(mcpUrl: string): string {
  return `{
  "inputs": [
    { "type": "promptString", "id": "svc-api-key", "description": "svc API key", "password": true }
  ],
  "servers": {
    "svc": {
      "type": "http",
      "url": "${mcpUrl}",
      "headers": { "Authorization": "Bearer \${input:svc-api-key}" }
    }
  }
}`;
}

function codexSnippet(mcpUrl: string): string {
  return `[mcp_servers.svc]
url = "${mcpUrl}"
bearer_token_env_var = "SVC_API_KEY"`;
}

function oauthSnippet(mcpUrl: string): string {
  return `# Claude Code
claude mcp add --transport http svc ${mcpUrl}
claude mcp login svc
# Codex
codex mcp add svc --url ${mcpUrl}
codex mcp login svc`;
}

function mcpSdkSnippet(mcpUrl: string, query: string): string {
  return `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL('${mcpUrl}'), {
    requestInit: { headers: { Authorization: \`Bearer \${process.env.SVC_API_KEY}\` } },
  }),
);
const result = await client.callTool({ name: 'web_search', arguments: { query: ${query}, maxResults: 5 } });
console.log(result.structuredContent); // svc.search.v1`;
}

function restSnippet(baseUrl: string, query: string): string {
  return `curl ${baseUrl}/mcp/tools/call \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"name": "web_search", "arguments": {"query": ${query}, "maxResults": 5}}'

curl ${baseUrl}/mcp -H "Authorization: Bearer $SVC_API_KEY"`;
}

function chatCurlSnippet(baseUrl: string, query: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "svc-2.1-search", "messages": [{"role": "user", "content": ${query}}]}'`;
}

function outputSample(): string {
  return `{
  "object": "svc.search.v1",
  "id": "srch_4fJ1qv…",
  "query": "postgresql release notes",
  "provider": "searxng",
  "results": [
    {
      "rank": 1,
      "title": "PostgreSQL 17 Release Notes",
      "url": "https://www.postgresql.org/docs/release/17.0/",
      "domain": "postgresql.org",
      "snippet": "Release date: 2024-09-26. This release contains a variety of fixes…",
      "publishedAt": "2024-09-26T00:00:00.000Z",
      "score": 1,
      "engine": "duckduckgo"
    }
  ],
  "warnings": [],
  "latencyMs": 412
}`;
}
