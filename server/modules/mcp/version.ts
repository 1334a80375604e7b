/** svc's version as package.json states it: what the MCP server reports as `serverInfo.version`. */
import { readFileSync } from 'node:fs';

export const serverVersion: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
