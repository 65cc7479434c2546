// Interop check with the official TypeScript MCP SDK, v1 line
// (`npm install @modelcontextprotocol/sdk@1`). v1 speaks only the initialize
// handshake (2025-11-25), so this exercises the legacy path.
//
// Usage: node ts_client.mjs MCP_URL FIXTURES_DIR
// Run it from a folder whose node_modules holds the SDK (bare imports resolve
// from the script's own location). Prints one "PASS|FAIL ts-legacy <check>: ..."
// line per check and exits 1 if any failed.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const EXPECTED_TOOLS = [
  'x_md_get_post',
  'x_md_get_profile',
  'x_md_search_posts',
  'x_md_get_followers',
  'x_md_get_following',
  'x_md_get_quotes',
  'x_md_get_reposts',
  'x_md_get_trends',
];
const POST_URL = 'https://x.com/demo_author/status/2087208847298015232';
const CHECKS = ['connect', 'tools/list', 'tools/call', 'tools/call profile', 'resources'];
const HANDLE = 'demo_author';
const TIMEOUT_MS = 30_000;
const LABEL = 'ts-legacy';

const [url, fixtures] = process.argv.slice(2);
if (!url || !fixtures) {
  console.error('usage: node ts_client.mjs MCP_URL FIXTURES_DIR');
  process.exit(2);
}
const fixture = (name) => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));
const postText = fixture('status-plain.json').status.text;
// x_md_get_profile lists the account's own posts of the first two timeline
// pages: no reposts, no replies (same rule as py_client.py).
const profilePostIds = [...fixture('profile-statuses-page1.json').results, ...fixture('profile-statuses-page2.json').results]
  .filter((p) => p.author.screen_name === HANDLE && !p.reposted_by && !p.replying_to)
  .map((p) => p.id);

const done = new Map();
function report(check, ok, detail) {
  done.set(check, ok);
  console.log(`${ok ? 'PASS' : 'FAIL'} ${LABEL} ${check}: ${String(detail).split(/\s+/).join(' ')}`);
}

async function run() {
  const client = new Client({ name: 'xmd-interop-ts', version: '0.0.1' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  // The SDK reports non-fatal transport problems here (for example a GET
  // stream refused with something other than 405); they must not pass silently.
  const transportErrors = [];
  client.onerror = (e) => transportErrors.push(String(e && e.message ? e.message : e));
  await client.connect(transport);
  try {
    const version = transport.protocolVersion;
    const info = client.getServerVersion();
    if (version !== '2025-11-25') {
      report('connect', false, `negotiated ${version}, want 2025-11-25`);
      return;
    }
    report('connect', true, `protocol ${version}, server ${info?.name} ${info?.version}`);

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const same = names.length === EXPECTED_TOOLS.length && [...names].sort().join() === [...EXPECTED_TOOLS].sort().join();
    report('tools/list', same, same ? `${names.length} tools: ${names.join(', ')}` : `tool names ${JSON.stringify(names)}, want exactly ${JSON.stringify(EXPECTED_TOOLS)}`);

    const result = await client.callTool({ name: 'x_md_get_post', arguments: { url: POST_URL, thread: 'off' } });
    const text = (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    const problems = [];
    if (result.isError) problems.push('isError is true');
    if (!text.includes(postText)) problems.push(`text lacks the fixture post text; text starts ${JSON.stringify(text.slice(0, 200))}`);
    const sc = result.structuredContent;
    if (sc === null || typeof sc !== 'object' || Array.isArray(sc)) problems.push(`structuredContent is ${JSON.stringify(sc)?.slice(0, 80)}, want an object`);
    report('tools/call', problems.length === 0, problems.length ? `x_md_get_post: ${problems.join('; ')}` : `x_md_get_post returned ${text.length} chars of Markdown with the post text`);

    // The v1 SDK validates structuredContent against the outputSchema it
    // cached from tools/list (ajv) and throws on a mismatch.
    const prof = await client.callTool({ name: 'x_md_get_profile', arguments: { handle: HANDLE } });
    const ids = (prof.structuredContent?.posts || []).map((p) => p.id);
    const pp = [];
    if (prof.isError) pp.push('isError is true');
    if (prof.structuredContent?.profile?.screen_name !== HANDLE) pp.push(`profile.screen_name ${JSON.stringify(prof.structuredContent?.profile?.screen_name)}`);
    if (JSON.stringify(ids) !== JSON.stringify(profilePostIds)) pp.push(`post ids ${JSON.stringify(ids)}, want ${JSON.stringify(profilePostIds)}`);
    report('tools/call profile', pp.length === 0, pp.length ? `x_md_get_profile: ${pp.join('; ')}` : `x_md_get_profile returned @${HANDLE} with ${ids.length} posts (exact fixture ids; SDK-validated against outputSchema)`);

    const { resources } = await client.listResources();
    const llms = resources.map((r) => r.uri).find((u) => u.endsWith('/llms.txt'));
    if (!llms) {
      report('resources', false, `no llms.txt among ${JSON.stringify(resources.map((r) => r.uri))}`);
    } else {
      const read = await client.readResource({ uri: llms });
      const body = read.contents.map((c) => c.text || '').join('');
      const ok = body.includes('/mcp') && body.includes('x_md_get_post') && transportErrors.length === 0;
      report('resources', ok, ok ? `${resources.length} resources; read ${llms} (${body.length} chars)` : `llms.txt lacks endpoint/tools or transport errors: ${JSON.stringify(transportErrors)}`);
    }
  } finally {
    await client.close();
  }
}

let timer;
try {
  await Promise.race([
    run(),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS); }),
  ]);
} catch (e) {
  console.error(e);
  const pending = CHECKS.find((c) => !done.has(c));
  if (pending) report(pending, false, `${e?.name}: ${e?.message}`);
} finally {
  clearTimeout(timer);
}
for (const c of CHECKS) if (!done.has(c)) report(c, false, 'not run after an earlier failure');
process.exit([...done.values()].every(Boolean) ? 0 : 1);
