// A small app on the official TypeScript Agent SDK, driven by the proxy's
// live tests (cmd/proxy_live_test.go). It runs one query with the scenario
// in $AGENTJQ_SDK_SCENARIO (JSON) and prints what the app saw as JSON
// lines: {"event":"canUseTool"|"hook"|"mcp"|"message"|"result"|"error",...}.
// The SDK is imported from $AGENTJQ_NODE_MODULES: no npm install here.
import path from "node:path";
import { pathToFileURL } from "node:url";

const nm = process.env.AGENTJQ_NODE_MODULES;
const sc = JSON.parse(process.env.AGENTJQ_SDK_SCENARIO);
const load = (p) => import(pathToFileURL(path.join(nm, p)).href);
const sdk = await load("@anthropic-ai/claude-agent-sdk/sdk.mjs");
const { z } = await load("zod/index.js");

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
let q;

const options = {
  pathToClaudeCodeExecutable: sc.claude,
  cwd: sc.cwd,
  env: { ...process.env },
  maxTurns: 8,
  canUseTool: async (toolName, input, { signal }) => {
    out({ event: "canUseTool", tool: toolName, input });
    if (sc.interrupt) {
      // Stop the turn while the request is pending: the CLI withdraws it.
      setTimeout(() => q.interrupt().then((r) => out({ event: "interrupted", response: r ?? null })), 200);
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      out({ event: "aborted", tool: toolName });
      return { behavior: "deny", message: "interrupted" };
    }
    if (sc.answer === "deny") {
      return { behavior: "deny", message: "the app says no" };
    }
    return { behavior: "allow", updatedInput: input };
  },
};
if (sc.sandbox) {
  options.sandbox = sc.sandbox;
}
if (sc.hook) {
  options.hooks = {
    PreToolUse: [{
      matcher: "Bash",
      hooks: [async (input) => {
        out({ event: "hook", hook_event_name: input.hook_event_name, tool: input.tool_name, command: input.tool_input?.command });
        return {};
      }],
    }],
  };
}
if (sc.mcp) {
  const ping = sdk.tool("ping", "Answer a ping", { note: z.string() }, async (args) => {
    out({ event: "mcp", tool: "ping", args });
    return { content: [{ type: "text", text: "pong: " + args.note }] };
  });
  options.mcpServers = { probe: sdk.createSdkMcpServer({ name: "probe", version: "1.0.0", tools: [ping] }) };
}

try {
  q = sdk.query({ prompt: sc.prompt, options });
  for await (const m of q) {
    if (m.type === "result") {
      out({ event: "result", subtype: m.subtype, is_error: m.is_error, result: m.result ?? null, denials: (m.permission_denials ?? []).map((d) => d.tool_name) });
    } else if (m.type === "assistant") {
      for (const b of m.message.content) {
        if (b.type === "text") out({ event: "message", text: b.text });
      }
    }
  }
  out({ event: "done" });
} catch (e) {
  out({ event: "error", message: String(e?.message ?? e) });
  process.exitCode = 1;
}
