// The ACP client of agentjq acp's live tests: the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0) on the client side, talking to
// `agentjq acp` over stdio. Every message either way is validated against
// the SDK's schema/v1/schema.json with ajv before the SDK sees it.
//
// Usage: node driver.mjs SCENARIO   with, in the environment,
//   AGENTJQ_NODE_MODULES  the node_modules holding the SDK and ajv
//   ACP_CMD               JSON array: the agentjq acp command line
//   ACP_CWD               the session's working directory
//   ACP_SESSION           (load) the session id to load
// It prints one JSON report on stdout: what the client saw.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const NM = process.env.AGENTJQ_NODE_MODULES;
const mod = (p) => import(pathToFileURL(join(NM, p)).href);
const acp = await mod("@agentclientprotocol/sdk/dist/v1/stable/acp.js");
const Ajv2020 = (await mod("ajv/dist/2020.js")).default;

// Methods only ACP's unstable schema has (session/fork) are validated
// against that one.
const ajv = new Ajv2020({ strict: false, discriminator: true, validateFormats: false, allErrors: true });
const defs = {}; // method -> {request, response} def names, as "schema#/$defs/Name"
for (const [key, file] of [["acp", "schema.json"], ["unstable", "schema.unstable.json"]]) {
  const schema = JSON.parse(readFileSync(join(NM, "@agentclientprotocol/sdk/schema/v1", file), "utf8"));
  ajv.addSchema(schema, key);
  const mine = {};
  for (const [name, d] of Object.entries(schema.$defs)) {
    const m = d["x-method"];
    if (!m || (defs[m] && !mine[m])) continue;
    mine[m] = true;
    defs[m] ??= {};
    if (name.endsWith("Response")) defs[m].response = `${key}#/$defs/${name}`;
    else defs[m].request = `${key}#/$defs/${name}`;
  }
}
const validators = {};
const validator = (ref) => (validators[ref] ??= ajv.getSchema(ref));

const report = { scenario: process.argv[2], updates: [], permissions: [], results: {}, errors: {}, invalid: [], messages: 0 };
const pending = { fromClient: new Map(), fromAgent: new Map() };

function check(dir, msg) {
  report.messages++;
  const bad = (why) => report.invalid.push({ dir, why, msg: JSON.stringify(msg).slice(0, 400) });
  if (msg.jsonrpc !== "2.0") return bad("no jsonrpc 2.0");
  const mine = dir === "out" ? pending.fromClient : pending.fromAgent;
  const theirs = dir === "out" ? pending.fromAgent : pending.fromClient;
  let def;
  if (msg.method !== undefined) {
    if (msg.id !== undefined) mine.set(JSON.stringify(msg.id), msg.method);
    def = defs[msg.method]?.request;
    if (!def) return bad(`unknown method ${msg.method}`);
    const v = validator(def);
    if (!v(msg.params ?? {})) bad(`${def}: ${ajv.errorsText(v.errors)}`);
    return;
  }
  const method = theirs.get(JSON.stringify(msg.id));
  theirs.delete(JSON.stringify(msg.id));
  if (!method) return bad("response to no request");
  if (msg.error) {
    if (!Number.isInteger(msg.error.code) || typeof msg.error.message !== "string") bad("malformed error");
    return;
  }
  def = defs[method]?.response;
  const v = validator(def);
  if (!v(msg.result)) bad(`${def}: ${ajv.errorsText(v.errors)}`);
}

// tap validates each NDJSON line passing through.
function tap(dir) {
  let buf = "";
  const dec = new TextDecoder();
  return new TransformStream({
    transform(chunk, ctl) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim() === "") continue;
        try { check(dir, JSON.parse(line)); } catch (e) { report.invalid.push({ dir, why: "not JSON: " + e.message, msg: line.slice(0, 200) }); }
      }
      ctl.enqueue(chunk);
    },
  });
}

const cmd = JSON.parse(process.env.ACP_CMD);
const child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const toAgent = tap("out");
toAgent.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
const fromAgent = Readable.toWeb(child.stdout).pipeThrough(tap("in"));
const stream = acp.ndJsonStream(toAgent.writable, fromAgent);

const cwd = process.env.ACP_CWD;
// Scripted answers to request_permission, in order; "cancel" sends
// session/cancel instead of answering.
const answers = (process.env.ACP_ANSWERS ?? "").split(",").filter(Boolean);
let onPermission = () => {};
let resolveWait = () => {};
let onToolCall = () => {};
let afterAllow = null;

const app = acp.client({ name: "agentjq-test" })
  .onNotification("session/update", ({ params }) => {
    report.updates.push(params.update);
    if (params.update.sessionUpdate === "tool_call") onToolCall();
  })
  .onRequest("session/request_permission", async ({ params, signal }) => {
    report.permissions.push({ toolCall: params.toolCall, options: params.options.map((o) => o.kind) });
    const a = answers.shift() ?? "reject_once";
    onPermission(params);
    if (a === "wait") {
      // Left open until the client cancels the turn, then answered
      // cancelled, as ACP asks of a client.
      await new Promise((res) => {
        resolveWait = res;
        signal.addEventListener("abort", () => { report.aborted = (report.aborted ?? 0) + 1; res(); }, { once: true });
      });
      return { outcome: { outcome: "cancelled" } };
    }
    if (a === "allow_once" && afterAllow) setTimeout(afterAllow, 1500);
    return { outcome: { outcome: "selected", optionId: a } };
  });

async function attempt(name, f) {
  try {
    report.results[name] = await f();
  } catch (e) {
    report.errors[name] = { code: e.code, message: e.message, data: e.data };
  }
}

await app.connectWith(stream, async (ctx) => {
  await attempt("initialize", () => ctx.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } }));
  const prompt = (sessionId, text) => ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  const scenario = process.argv[2];
  if (scenario === "load" || scenario === "resume" || scenario === "fork") {
    // Takes up the recorded session ACP_SESSION (fork: a new one from
    // it), then prompts it.
    await attempt(scenario, () => ctx.request("session/" + scenario, { sessionId: process.env.ACP_SESSION, cwd, mcpServers: [] }));
    report.updatesAtLoad = report.updates.length;
    const sid = scenario === "fork" ? report.results.fork?.sessionId : process.env.ACP_SESSION;
    await attempt("prompt", () => prompt(sid, "HELLO again"));
    await attempt("list", () => ctx.request("session/list", {}));
    return;
  }
  await attempt("new", () => ctx.request("session/new", { cwd, mcpServers: JSON.parse(process.env.ACP_MCP ?? "[]") }));
  const sid = report.results.new?.sessionId;
  if (!sid) return;
  switch (scenario) {
    case "hello":
      await attempt("prompt", () => prompt(sid, "HELLO"));
      break;
    case "writes":
      // ACP_PROMPTS: one prompt per comma. ACP_MODES: "I:MODE,...", the
      // mode set with session/set_mode before prompt I.
      const modes = Object.fromEntries((process.env.ACP_MODES ?? "").split(",").filter(Boolean).map((m) => m.split(":")));
      for (const [i, p] of (process.env.ACP_PROMPTS ?? "").split(",").entries()) {
        if (modes[i]) await attempt("set_mode" + i, () => ctx.request("session/set_mode", { sessionId: sid, modeId: modes[i] }));
        await attempt("prompt" + i, () => prompt(sid, p));
      }
      break;
    case "cancel":
      // The tool runs, then the client cancels the turn.
      onToolCall = () => { onToolCall = () => {}; setTimeout(() => ctx.notify("session/cancel", { sessionId: sid }), 1500); };
      await attempt("prompt", () => prompt(sid, process.env.ACP_PROMPT));
      await attempt("after", () => prompt(sid, "HELLO"));
      break;
    case "cancel-pending":
      // Cancelled while the permission request is still open.
      onPermission = () => setTimeout(async () => {
        // The agent withdraws the open request itself ($/cancel_request),
        // which aborts this handler; a client that answers first is fine too.
        await ctx.notify("session/cancel", { sessionId: sid });
        setTimeout(() => resolveWait(), 5000).unref();
      }, 300);
      await attempt("prompt", () => prompt(sid, process.env.ACP_PROMPT));
      await attempt("after", () => prompt(sid, "HELLO"));
      break;
    case "mode":
      await attempt("set_mode", () => ctx.request("session/set_mode", { sessionId: sid, modeId: "acceptEdits" }));
      await attempt("bad_mode", () => ctx.request("session/set_mode", { sessionId: sid, modeId: "bypassPermissions" }));
      await attempt("prompt", () => prompt(sid, "HELLO"));
      break;
    case "fail":
      await attempt("prompt", () => prompt(sid, "FAIL400"));
      await attempt("prompt2", () => prompt(sid, "HELLO"));
      break;
    case "one":
      await attempt("prompt", () => prompt(sid, process.env.ACP_PROMPT));
      break;
    case "loop":
      await attempt("prompt", () => prompt(sid, "LOOP"));
      break;
    case "think":
      await attempt("prompt", () => prompt(sid, "THINK"));
      break;
    case "close":
      // A prompt, session/close, then a prompt to the closed session.
      await attempt("prompt", () => prompt(sid, "HELLO"));
      await attempt("close", () => ctx.request("session/close", { sessionId: sid }));
      await attempt("after", () => prompt(sid, "HELLO"));
      break;
  }
});
child.stdin.end();
const code = await new Promise((res) => child.on("exit", (c, s) => res(c ?? s)));
report.exit = code;
process.stdout.write(JSON.stringify(report) + "\n");
