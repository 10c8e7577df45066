// Validates a JSON-RPC trace of ACP (one message a line on stdin, as
// `acpx --format json` prints both directions) against the ACP SDK's
// schema (@agentclientprotocol/sdk 2.4.0, schema/v1/schema.json; a method
// only the unstable schema has, such as session/fork, against that one).
// It prints one JSON object: {"messages": N, "invalid": [...]}.
//
// Requests from the client are told from the agent's by method: the agent
// only sends session/update, session/request_permission, fs/* and
// terminal/*.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const NM = process.env.AGENTJQ_NODE_MODULES;
const Ajv2020 = (await import(pathToFileURL(join(NM, "ajv/dist/2020.js")).href)).default;
const load = (f) => JSON.parse(readFileSync(join(NM, "@agentclientprotocol/sdk/schema/v1", f), "utf8"));
const defs = {}; // method -> {request, response, schema}
const ajv = new Ajv2020({ strict: false, discriminator: true, validateFormats: false, allErrors: true });
for (const [key, file] of [["acp", "schema.json"], ["unstable", "schema.unstable.json"]]) {
  const schema = load(file);
  ajv.addSchema(schema, key);
  for (const [name, d] of Object.entries(schema.$defs)) {
    const m = d["x-method"];
    if (!m || (defs[m] && defs[m].schema !== key)) continue;
    defs[m] ??= { schema: key };
    if (name.endsWith("Response")) defs[m].response = name;
    else defs[m].request = name;
  }
}
const fromAgent = (m) => m === "session/update" || m === "session/request_permission" || m.startsWith("fs/") || m.startsWith("terminal/");
const pending = { client: new Map(), agent: new Map() };
const out = { messages: 0, invalid: [] };
const input = readFileSync(0, "utf8");
for (const line of input.split("\n")) {
  if (line.trim() === "" || line[0] !== "{") continue;
  let msg;
  try { msg = JSON.parse(line); } catch { continue; }
  if (msg.jsonrpc !== "2.0") continue;
  out.messages++;
  const bad = (why) => out.invalid.push({ why, msg: line.slice(0, 400) });
  if (msg.method !== undefined) {
    const side = fromAgent(msg.method) ? "agent" : "client";
    if (msg.id !== undefined) pending[side].set(JSON.stringify(msg.id), msg.method);
    const d = defs[msg.method];
    if (!d?.request) { bad(`unknown method ${msg.method}`); continue; }
    const v = ajv.getSchema(`${d.schema}#/$defs/${d.request}`);
    if (!v(msg.params ?? {})) bad(`${d.request}: ${ajv.errorsText(v.errors)}`);
    continue;
  }
  // A response answers the other side's request: try the client's first
  // (acpx's requests are the most), then the agent's.
  // acpx prints its own failures as errors with a null id.
  if (msg.id === null && msg.error) continue;
  const id = JSON.stringify(msg.id);
  let method = pending.client.get(id);
  if (method) pending.client.delete(id);
  else { method = pending.agent.get(id); pending.agent.delete(id); }
  if (!method) { bad("response to no request"); continue; }
  if (msg.error) {
    if (!Number.isInteger(msg.error.code) || typeof msg.error.message !== "string") bad("malformed error");
    continue;
  }
  const d = defs[method];
  const v = ajv.getSchema(`${d.schema}#/$defs/${d.response}`);
  if (!v(msg.result)) bad(`${d.response}: ${ajv.errorsText(v.errors)}`);
}
process.stdout.write(JSON.stringify(out) + "\n");
