// Drives `jailrun mcp --policy strict` with the official MCP TypeScript SDK
// client (Client + StdioClientTransport) through a whole session, and prints
// one JSON line summing up what came back; tests/integration/mcp-sdk.sh
// checks it field by field.
//
//   node mcp-client.mjs JAILRUN WORKSPACE
//
// The server runs in WORKSPACE with this process's HOME, PATH and
// JAILRUN_POLICY_PATH.  The workspace holds (made by the test) sub/inner.md
// and passwd-link -> /etc/passwd; HOME holds .ssh/id_rsa with the text
// jailrun-test-secret.  A step that throws is recorded in `errors` and the
// session goes on.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [jailrun, workspace] = process.argv.slice(2);
if (!jailrun || !workspace) {
	console.error('usage: node mcp-client.mjs JAILRUN WORKSPACE');
	process.exit(2);
}
const home = process.env.HOME;
const SECRET = 'jailrun-test-secret';
const summary = { errors: [] };

const env = { HOME: home, PATH: process.env.PATH };
if (process.env.JAILRUN_POLICY_PATH) env.JAILRUN_POLICY_PATH = process.env.JAILRUN_POLICY_PATH;

const transport = new StdioClientTransport({
	command: jailrun,
	args: ['mcp', '--policy', 'strict'],
	cwd: workspace,
	env,
	stderr: 'inherit',
});
// Protocol.connect keeps a handler set before it: see the raw initialize result.
transport.onmessage = (msg) => {
	if (msg && msg.result && typeof msg.result.protocolVersion === 'string') {
		summary.protocolVersion = msg.result.protocolVersion;
	}
};
const client = new Client({ name: 'jailrun-mcp-sdk-test', version: '1.0.0' });

const TIMEOUT = { timeout: 30000 };

// The text of a tool result: its text contents joined.
function text(result) {
	return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// Calls a tool; returns {isError, text}, or {thrown} when the call itself failed.
async function call(name, args) {
	try {
		const r = await client.callTool({ name, arguments: args }, undefined, TIMEOUT);
		return { isError: r.isError === true, text: text(r) };
	} catch (e) {
		summary.errors.push(`${name} ${JSON.stringify(args)}: ${e.message}`);
		return { thrown: String(e.message), isError: null, text: '' };
	}
}

async function step(name, fn) {
	try {
		await fn();
	} catch (e) {
		summary.errors.push(`${name}: ${e && e.stack ? e.stack.split('\n')[0] : e}`);
	}
}

let leaked = false;
function note(r) {
	if (r.text.includes(SECRET)) leaked = true;
	return r;
}

await step('connect', async () => {
	await client.connect(transport, TIMEOUT);
	summary.connected = true;
	summary.serverInfo = client.getServerVersion() ?? null;
	summary.hasToolsCapability = !!client.getServerCapabilities()?.tools;
});

if (summary.connected) {
	await step('ping', async () => {
		await client.ping(TIMEOUT);
		summary.ping = true;
	});

	await step('listTools', async () => {
		const { tools } = await client.listTools(undefined, TIMEOUT);
		summary.tools = tools.map((t) => t.name).sort();
		// Each schema: an object schema naming the tool's parameters from the spec.
		const params = {
			bash: ['command'],
			read_file: ['path'],
			write_file: ['path', 'content'],
			edit_file: ['path', 'old_string', 'new_string'],
			list_directory: [],
			glob: ['pattern'],
			grep: ['pattern'],
		};
		summary.schemaProblems = [];
		for (const t of tools) {
			const s = t.inputSchema;
			if (!s || s.type !== 'object') {
				summary.schemaProblems.push(`${t.name}: no object inputSchema`);
				continue;
			}
			for (const p of params[t.name] || []) {
				if (!s.properties || !s.properties[p]) summary.schemaProblems.push(`${t.name}: no property ${p}`);
				if (!(s.required || []).includes(p)) summary.schemaProblems.push(`${t.name}: ${p} not required`);
			}
		}
		summary.descriptions = tools.every((t) => typeof t.description === 'string' && t.description.length > 0);
	});

	const echo = note(await call('bash', { command: 'echo hello' }));
	summary.bashEcho = echo;

	summary.bashExit = note(await call('bash', { command: 'echo out; echo err >&2; exit 3' }));

	summary.write = note(await call('write_file', { path: 'notes.txt', content: 'alpha\nbeta\n' }));
	summary.read = note(await call('read_file', { path: 'notes.txt' }));

	summary.edit = note(await call('edit_file', { path: 'notes.txt', old_string: 'beta', new_string: 'gamma' }));
	summary.readAfterEdit = note(await call('read_file', { path: 'notes.txt' }));

	await call('write_file', { path: 'dup.txt', content: 'x\nx\n' });
	summary.editAmbiguous = note(await call('edit_file', { path: 'dup.txt', old_string: 'x', new_string: 'y' }));
	summary.editMissing = note(await call('edit_file', { path: 'dup.txt', old_string: 'zzz', new_string: 'y' }));
	summary.readDup = note(await call('read_file', { path: 'dup.txt' }));

	summary.grep = note(await call('grep', { pattern: 'gam+a' }));
	summary.grepInclude = note(await call('grep', { pattern: 'x', include: '*.md' }));

	summary.listDirectory = note(await call('list_directory', {}));
	summary.listSub = note(await call('list_directory', { path: 'sub' }));

	summary.glob = note(await call('glob', { pattern: '**/*.md' }));

	// What the jail must refuse.
	summary.readSecret = note(await call('read_file', { path: `${home}/.ssh/id_rsa` }));
	summary.bashSecret = note(await call('bash', { command: 'cat ~/.ssh/id_rsa' }));
	summary.readPasswdLink = note(await call('read_file', { path: 'passwd-link' }));
	summary.writeOutside = note(await call('write_file', { path: '/etc/jailrun-mcp-test', content: 'x' }));
	summary.secretLeaked = leaked;

	await step('close', async () => {
		await client.close();
		summary.closed = true;
	});
}

console.log(JSON.stringify(summary));
process.exit(0);
