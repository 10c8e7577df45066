// A WebSocket client of agentjq serve, as a browser-less app would write
// it with the ws package: hello, a session, a turn whose approval it
// answers, and the refusals. Prints one JSON summary line.
const WebSocket = require("ws");
const [url, token, workdir, protocolVersion, turn] = process.argv.slice(2);

function open(opts) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts);
    ws.on("open", () => resolve(ws));
    ws.on("unexpected-response", (req, res) => reject(new Error("HTTP " + res.statusCode)));
    ws.on("error", reject);
  });
}

function rpc(ws, onMessage) {
  let next = 1;
  const pending = new Map();
  ws.on("message", (data) => {
    const m = JSON.parse(data.toString());
    if (m.method) return onMessage(m);
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    m.error ? p.reject(m.error) : p.resolve(m.result);
  });
  return (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  });
}

(async () => {
  const out = { refusals: {} };
  try { await open({ headers: { Origin: "https://evil.example" } }); out.refusals.origin = "accepted"; }
  catch (e) { out.refusals.origin = e.message; }

  const ws = await open();
  const events = [];
  let done;
  const finished = new Promise((r) => (done = r));
  const call = rpc(ws, (m) => {
    if (m.method === "session.event") {
      events.push(m.params);
      if (m.params.kind === "turn.done") done();
    } else if (m.method === "approval.request" && m.id !== undefined) {
      out.approvalTool = m.params.tool;
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow", scope: "once" } }));
    }
  });
  try { await call("session.list", {}); } catch (e) { out.refusals.noHello = e.data.code; }
  try { await call("system.hello", { token: token + "x", clientVersion: "node", protocolVersion }); } catch (e) { out.refusals.token = e.data.code; }
  try { await call("system.hello", { token, clientVersion: "node", protocolVersion: "9.0.0" }); } catch (e) { out.refusals.major = e.data.code; }
  const hello = await call("system.hello", { token, clientVersion: "node", protocolVersion, clientName: "node-ws" });
  out.serverProtocol = hello.protocolVersion;
  const { sessionId } = await call("session.create", { workdir });
  await call("session.subscribe", { sessionId, afterSeq: 0 });
  const { firstSeq } = await call("session.prompt", { sessionId, text: turn });
  out.firstSeq = firstSeq;
  await finished;
  out.seqs = events.map((e) => e.seq);
  out.kinds = [...new Set(events.map((e) => e.kind))].sort();
  out.sessionId = sessionId;
  console.log(JSON.stringify(out));
  ws.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
