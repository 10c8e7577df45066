// A strict TypeScript client of the daemon, written against the generated
// sdk/protocol.ts only: it narrows every session.event by its kind and
// answers approvals with the Decision type, with no casts and no untyped
// values (TestTypeScriptStrictClient compiles it with tsc --strict).
import type {
  ClientMethods,
  Decision,
  Event,
  NotificationMessage,
  ServerRequestMessage,
  SessionEndedPayload,
} from "./protocol";

// The socket the client runs on: the ws package's, or a browser's.
export interface Socket {
  send(data: string): void;
  onMessage(handler: (data: string) => void): void;
}

type Incoming =
  | { jsonrpc: "2.0"; id: number; result: unknown; error?: { message: string } }
  | NotificationMessage
  | ServerRequestMessage;

export function describe(ev: Event): string {
  switch (ev.kind) {
    case "agent.line":
      return `line ${JSON.stringify(ev.payload.line)}`;
    case "turn.started":
      return `turn: ${ev.payload.text ?? ""}`;
    case "turn.steered":
      return `steered: ${ev.payload.text ?? ""}`;
    case "message.delta":
      return ev.payload.text;
    case "message.done":
      return `said ${ev.payload.text}`;
    case "tool.call":
      return `${ev.payload.name} ${ev.payload.toolUseId}`;
    case "tool.result":
      return `${ev.payload.toolUseId}${ev.payload.isError ? " failed" : ""}`;
    case "subagent.spawn":
    case "subagent.update":
    case "subagent.done":
      return `subagent ${ev.payload.toolUseId ?? ev.payload.taskId ?? ""} ${ev.payload.status ?? ""}`;
    case "mode.changed":
      return `mode ${ev.payload.mode}`;
    case "usage":
      return `cost ${ev.payload.totalCostUsd}`;
    case "error":
      return `${ev.payload.code}: ${ev.payload.message}`;
    case "turn.done":
      return `done ${ev.payload.subtype} after ${ev.payload.numTurns} turns, ${ev.payload.durationMs} ms`;
    case "approval.pending":
    case "approval.resolved":
      return `approval ${ev.payload.id} ${ev.payload.decision ?? "pending"}`;
    case "session.ended":
      return ended(ev.payload);
    case "session.titled":
      return `titled ${ev.payload.title}`;
    default: {
      // Every kind is handled: a new one fails this assignment.
      const unhandled: never = ev;
      return unhandled;
    }
  }
}

function ended(p: SessionEndedPayload): string {
  switch (p.outcome) {
    case "success":
      return "ended well";
    case "error":
    case "denied":
    case "crashed":
      return `ended badly (${p.exitCode})`;
    case "interrupted":
    case "timeout":
    case "stalled":
    case "closed":
      return `stopped: ${p.outcome}`;
  }
}

export class Client {
  private next = 1;
  private waiting = new Map<number, (r: { result: unknown; error?: { message: string } }) => void>();
  readonly seen: string[] = [];

  constructor(private socket: Socket, private decide: (tool: string) => Decision) {
    socket.onMessage((data) => this.receive(data));
  }

  call<M extends keyof ClientMethods>(method: M, params: ClientMethods[M]["params"]): Promise<unknown> {
    const id = this.next++;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (r) => (r.error ? reject(new Error(r.error.message)) : resolve(r.result)));
    });
  }

  private receive(data: string): void {
    const msg: Incoming = JSON.parse(data);
    if (!("method" in msg)) {
      this.waiting.get(msg.id)?.(msg);
      this.waiting.delete(msg.id);
      return;
    }
    switch (msg.method) {
      case "approval.request": {
        const answer: Decision = this.decide(msg.params.tool);
        this.socket.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: answer }));
        return;
      }
      case "session.event":
        this.seen.push(describe(msg.params));
        return;
      case "system.disconnect":
        this.seen.push(`dropped: ${msg.params.code} ${msg.params.reason}`);
        return;
      case "approval.pending":
      case "approval.resolved":
        this.seen.push(`approval ${msg.params.id}`);
        return;
    }
  }
}

export const allowReads = (tool: string): Decision =>
  tool === "Read" ? { decision: "allow", scope: "session" } : { decision: "deny", message: "not a read" };
