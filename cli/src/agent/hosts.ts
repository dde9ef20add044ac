/**
 * Configuration snippets for the agent hosts `svc agent bootstrap --host` knows. The host only
 * decides the format of the printed snippet: nothing is written into another program's files.
 * Every snippet connects the host to the service's MCP endpoint with bearer authentication
 * (spec 1 "Authentication" 1), reading the key from SVC_API_KEY unless the secret is embedded.
 */
export const AGENT_HOSTS = ['none', 'claude-code', 'cursor', 'codex', 'vscode'] as const;
export type AgentHost = (typeof AGENT_HOSTS)[number];

/** The variable the snippets (and `svc` itself) read the key from. */
export const KEY_ENV_VAR = 'SVC_API_KEY';

/** Where the MCP endpoint lives under the API origin (ours; the specification does not name the path). */
export const MCP_PATH = '/mcp';
export const mcpEndpoint = (apiUrl: string) => `${apiUrl}${MCP_PATH}`;

/** The name the service gets in the host's server list. */
const SERVER_NAME = 'svc';

export interface Snippet {
  host: Exclude<AgentHost, 'none'>;
  /** Human name of the host and where the snippet goes (for the table output). */
  label: string;
  file: string;
  text: string;
}

interface HostFormat {
  label: string;
  file: string;
  /** `secret` undefined: reference the environment variable instead. */
  render(url: string, secret: string | undefined): string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
const bearer = (secret: string | undefined, envRef: string) => `Bearer ${secret ?? envRef}`;
/** TOML basic strings accept JSON's escapes for the characters that occur here. */
const tomlString = (s: string) => JSON.stringify(s);

const HOSTS: Record<Exclude<AgentHost, 'none'>, HostFormat> = {
  // Claude Code project file; `${VAR}` is expanded from the environment.
  'claude-code': {
    label: 'Claude Code',
    file: '.mcp.json',
    render: (url, secret) =>
      json({ mcpServers: { [SERVER_NAME]: { type: 'http', url, headers: { Authorization: bearer(secret, `\${${KEY_ENV_VAR}}`) } } } }),
  },
  // Cursor project (.cursor/mcp.json) or global (~/.cursor/mcp.json) file; `${env:VAR}` interpolation.
  cursor: {
    label: 'Cursor',
    file: '.cursor/mcp.json',
    render: (url, secret) =>
      json({ mcpServers: { [SERVER_NAME]: { url, headers: { Authorization: bearer(secret, `\${env:${KEY_ENV_VAR}}`) } } } }),
  },
  // Codex ~/.codex/config.toml; a bearer token comes from an environment variable, literal headers from http_headers.
  codex: {
    label: 'Codex',
    file: '~/.codex/config.toml',
    render: (url, secret) =>
      [
        `[mcp_servers.${SERVER_NAME}]`,
        `url = ${tomlString(url)}`,
        secret === undefined
          ? `bearer_token_env_var = ${tomlString(KEY_ENV_VAR)}`
          : `http_headers = { "Authorization" = ${tomlString(bearer(secret, ''))} }`,
      ].join('\n'),
  },
  // VS Code workspace file (.vscode/mcp.json): top-level "servers", `${env:VAR}` substitution.
  vscode: {
    label: 'VS Code',
    file: '.vscode/mcp.json',
    render: (url, secret) =>
      json({ servers: { [SERVER_NAME]: { type: 'http', url, headers: { Authorization: bearer(secret, `\${env:${KEY_ENV_VAR}}`) } } } }),
  },
};

/** The snippet for `host` (none for `none`); with `secret` it embeds the secret. */
export function hostSnippet(host: AgentHost, apiUrl: string, secret?: string): Snippet | undefined {
  if (host === 'none') return undefined;
  const format = HOSTS[host];
  return { host, label: format.label, file: format.file, text: format.render(mcpEndpoint(apiUrl), secret) };
}
