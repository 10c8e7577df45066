// A ws client lists and names sessions: two sessions in two working
// directories, one titled at create, one named by its first prompt and
// then retitled; session.list whole and narrowed by workdir and live,
// once a session has ended too. Prints one JSON summary line.
const WebSocket = require("ws");
const [url, token, wd1, wd2, protocolVersion] = process.argv.slice(2);

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
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  const waiters = [];
  const events = [];
  const call = rpc(ws, (m) => {
    if (m.method !== "session.event") return;
    events.push(m.params);
    for (const w of waiters.splice(0)) w();
  });
  const until = async (pred) => { while (!pred()) await new Promise((r) => waiters.push(r)); };
  await call("system.hello", { token, clientVersion: "node", protocolVersion, clientName: "ws-list" });
  const a = await call("session.create", { workdir: wd1, title: "Fix the build" });
  const b = await call("session.create", { workdir: wd2 });
  await call("session.subscribe", { sessionId: b.sessionId, afterSeq: 0 });
  await call("session.prompt", { sessionId: b.sessionId, text: "SAY hello\nand more below" });
  await until(() => events.some((e) => e.sessionId === b.sessionId && e.kind === "turn.done"));
  const out = { a: a.sessionId, b: b.sessionId };
  const titles = async (params) => Object.fromEntries((await call("session.list", params)).sessions.map((s) => [s.sessionId, s.title ?? null]));
  out.first = await titles({});
  await call("session.setTitle", { sessionId: b.sessionId, title: "Say hello" });
  // The event may come after the call's answer: wait for it.
  await until(() => events.some((e) => e.kind === "session.titled"));
  out.titledEvent = events.find((e) => e.kind === "session.titled").payload.title;
  try { await call("session.setTitle", { sessionId: b.sessionId, title: "two\nlines" }); out.badTitle = "accepted"; }
  catch (e) { out.badTitle = e.data.code; }
  out.renamed = await titles({});
  out.inWd2 = await titles({ workdir: wd2 });
  await call("session.close", { sessionId: a.sessionId });
  for (let i = 0; i < 300; i++) {
    const s = (await call("session.list", {})).sessions.find((s) => s.sessionId === a.sessionId);
    if (s.ended) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  out.live = await titles({ live: true });
  out.all = await titles({});
  console.log(JSON.stringify(out));
  ws.close();
})().catch((e) => { console.error(e); process.exit(1); });
