// Generated from daemon/protocol.json by make protocol. Do not edit.

export const PROTOCOL_VERSION = "0.1.0";

/** each raw line of the agent's stdout, for clients that want the protocol itself */
export interface AgentLineEvent {
  kind: "agent.line";
  payload: AgentLinePayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface AgentLinePayload {
  line: unknown;
}

export interface AgentProfile {
  binary: string;
  name: string;
  versions: string[];
}

export interface AllowlistParams {
  rule: string;
}

export interface AllowlistResult {
  allow: string[];
  policy: string;
}

export interface ApprovalEventPayload {
  decision?: "allow" | "deny";
  id: string;
  tool?: string;
  who?: string;
}

export interface ApprovalInfo {
  created: string;
  cwd?: string;
  id: string;
  input: unknown;
  keyInput?: string;
  permissionSuggestions?: unknown[];
  requestId: string;
  sessionId: string;
  tool: string;
  toolUseId?: string;
  trace: string[];
}

export interface ApprovalListParams {
  sessionId?: string;
}

export interface ApprovalListResult {
  approvals: ApprovalInfo[];
}

/** an approval is waiting for a client */
export interface ApprovalPendingEvent {
  kind: "approval.pending";
  payload: ApprovalEventPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

/** an approval was answered */
export interface ApprovalResolvedEvent {
  kind: "approval.resolved";
  payload: ApprovalEventPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface BackendSetParams {
  model: string;
  sessionId: string;
}

export interface CommandInfo {
  description?: string;
  name: string;
}

export interface CommandListResult {
  commands: CommandInfo[];
}

export interface CommandRunParams {
  args?: string;
  command: string;
  sessionId: string;
}

export interface CreateParams {
  agent?: string;
  args?: string[];
  mode?: string;
  model?: string;
  partial?: boolean;
  policy?: string[];
  title?: string;
  workdir: string;
}

export interface CreateResult {
  recording: string;
  sessionId: string;
}

export interface Decision {
  decision: "allow" | "deny";
  message?: string;
  scope?: "once" | "session" | "always";
  updatedInput?: unknown;
}

export interface DisconnectParams {
  code: string;
  lastSeq?: Record<string, number>;
  reason: string;
}

export interface Empty {
}

/** an error of the agent or of agentjq (a warning, a failed turn) */
export interface ErrorEvent {
  kind: "error";
  payload: ErrorPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface ErrorPayload {
  code: string;
  message: string;
}

/** One session.event: a variant per kind (discriminator kind). */
export type Event =
  | AgentLineEvent
  | TurnStartedEvent
  | MessageDeltaEvent
  | MessageDoneEvent
  | ToolCallEvent
  | ToolResultEvent
  | SubagentSpawnEvent
  | SubagentUpdateEvent
  | SubagentDoneEvent
  | ModeChangedEvent
  | UsageEvent
  | ErrorEvent
  | TurnDoneEvent
  | ApprovalPendingEvent
  | ApprovalResolvedEvent
  | SessionEndedEvent
  | TurnSteeredEvent
  | SessionTitledEvent;

export interface ForkParams {
  atMessage?: string;
  sessionId: string;
  title?: string;
}

export interface HealthResult {
  ok: boolean;
  sessions: number;
}

export interface HelloParams {
  clientName?: string;
  clientVersion: string;
  protocolVersion: string;
  token: string;
}

export interface HelloResult {
  agents: AgentProfile[];
  capabilities: string[];
  clientId: string;
  protocolVersion: string;
  serverVersion: string;
}

export interface InfoResult {
  clients: number;
  home: string;
  pid: number;
  policy?: string;
  port?: number;
  protocolVersion: string;
  serverVersion: string;
  sessions: number;
  socket?: string;
}

export interface ListParams {
  live?: boolean;
  workdir?: string;
}

export interface ListResult {
  sessions: SessionInfo[];
}

/** a text delta of a partial message (session.create partial: true passes --include-partial-messages; claude streams the main agent's messages only, a subagent's arrive whole) */
export interface MessageDeltaEvent {
  kind: "message.delta";
  payload: MessageDeltaPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface MessageDeltaPayload {
  parentToolUseId?: string;
  text: string;
}

/** an assistant message, whole */
export interface MessageDoneEvent {
  kind: "message.done";
  payload: MessageDonePayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface MessageDonePayload {
  message: unknown;
  parentToolUseId?: string;
  text: string;
}

/** the permission mode changed (init, session.setMode) */
export interface ModeChangedEvent {
  kind: "mode.changed";
  payload: ModeChangedPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface ModeChangedPayload {
  mode: string;
}

export interface PromptParams {
  message?: unknown;
  sessionId: string;
  text?: string;
}

export interface PromptResult {
  firstSeq: number;
}

export interface ResolvedParams {
  decision: "allow" | "deny";
  id: string;
  reason?: string;
  scope?: "once" | "session" | "always";
  sessionId: string;
  who: string;
}

export interface RespondParams {
  decision: "allow" | "deny";
  id: string;
  message?: string;
  scope?: "once" | "session" | "always";
  updatedInput?: unknown;
}

export interface ResumeParams {
  afterSeq: number;
  sessionId: string;
}

/** the agent's process ended; the session can be read, not driven */
export interface SessionEndedEvent {
  kind: "session.ended";
  payload: SessionEndedPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface SessionEndedPayload {
  error?: string;
  exitCode: number;
  outcome: "success" | "error" | "denied" | "interrupted" | "timeout" | "stalled" | "closed" | "crashed";
}

export interface SessionInfo {
  agent: string;
  agentSessionId?: string;
  created: string;
  ended: boolean;
  lastSeq: number;
  mode?: string;
  model?: string;
  outcome?: "success" | "error" | "denied" | "interrupted" | "timeout" | "stalled" | "closed" | "crashed";
  pendingApprovals: number;
  recording: string;
  sessionId: string;
  title?: string;
  workdir: string;
}

export interface SessionRef {
  sessionId: string;
}

/** the session's title was set (session.create's title, session.setTitle) */
export interface SessionTitledEvent {
  kind: "session.titled";
  payload: TitledPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface SetModeParams {
  mode: string;
  sessionId: string;
}

export interface SetTitleParams {
  sessionId: string;
  title: string;
}

export interface SteerParams {
  sessionId: string;
  text: string;
}

export interface SteerResult {
  firstSeq: number;
  sendNow?: "stopped" | "delivering" | "nothing_waiting";
}

/** a subagent ended, once: task_notification for a backgrounded Task (its status), else the Task call's tool_result (completed or failed) */
export interface SubagentDoneEvent {
  kind: "subagent.done";
  payload: SubagentPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface SubagentPayload {
  detail: unknown;
  status?: string;
  taskId?: string;
  toolUseId?: string;
}

/** a subagent started, once per subagent: its Task/Agent tool call, or a task_started line without one (status started) */
export interface SubagentSpawnEvent {
  kind: "subagent.spawn";
  payload: SubagentPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

/** a subagent's progress: task_started after its call (started), its messages (parent_tool_use_id; running), task_progress and task_updated (their status), a backgrounded Task's immediate tool_result (launched) */
export interface SubagentUpdateEvent {
  kind: "subagent.update";
  payload: SubagentPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface SubscribeParams {
  afterSeq?: number;
  filter?: string;
  kinds?: string[];
  sessionId: string;
}

export interface SubscribeResult {
  ended: boolean;
  lastSeq: number;
  pendingApprovals: ApprovalInfo[];
  sessionId: string;
}

export interface TitledPayload {
  title: string;
}

/** a tool_use block of an assistant message */
export interface ToolCallEvent {
  kind: "tool.call";
  payload: ToolCallPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface ToolCallPayload {
  input: unknown;
  name: string;
  parentToolUseId?: string;
  toolUseId: string;
}

export interface ToolListResult {
  tools: string[];
}

/** a tool_result block of a user message */
export interface ToolResultEvent {
  kind: "tool.result";
  payload: ToolResultPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface ToolResultPayload {
  content: unknown;
  isError: boolean;
  parentToolUseId?: string;
  toolUseId: string;
}

/** the turn's result */
export interface TurnDoneEvent {
  kind: "turn.done";
  payload: TurnDonePayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface TurnDonePayload {
  durationMs: number;
  isError: boolean;
  numTurns: number;
  result?: string;
  subtype: string;
}

/** a turn was sent to the agent (session.prompt, command.run) */
export interface TurnStartedEvent {
  kind: "turn.started";
  payload: TurnStartedPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface TurnStartedPayload {
  text?: string;
}

/** a user message sent to reach the model now (session.steer): claude takes it into the running turn, or stops that turn (its turn.done, error_during_execution) and answers the message in the next turn.done */
export interface TurnSteeredEvent {
  kind: "turn.steered";
  payload: TurnStartedPayload;
  seq: number;
  sessionId: string;
  ts: string;
}

/** token usage and cost of a turn */
export interface UsageEvent {
  kind: "usage";
  payload: UsagePayload;
  seq: number;
  sessionId: string;
  ts: string;
}

export interface UsagePayload {
  totalCostUsd: number;
  usage: unknown;
}

export interface ClientMethods {
  /** Approvals waiting for an answer. */
  "approval.list": { params: ApprovalListParams; result: ApprovalListResult };
  /** Answer an approval; the first answer wins, a later one fails approval_resolved. scope session or always is for an allow; a deny is once (a deny rule belongs in a policy file). */
  "approval.respond": { params: RespondParams; result: ResolvedParams };
  /** On claude the backend is the model: set_model. */
  "backend.set": { params: BackendSetParams; result: Empty };
  /** The agent's slash commands (from its init). */
  "command.list": { params: SessionRef; result: CommandListResult };
  /** Send a slash command as a turn. */
  "command.run": { params: CommandRunParams; result: PromptResult };
  /** Add an allow rule (validated like a --policy file). */
  "permission.allowlist.add": { params: AllowlistParams; result: AllowlistResult };
  /** The allow rules of the daemon's --allowlist policy file. */
  "permission.allowlist.list": { params: Empty; result: AllowlistResult };
  /** Remove an allow rule. */
  "permission.allowlist.remove": { params: AllowlistParams; result: AllowlistResult };
  /** End the session: stdin closed, then the staged shutdown. */
  "session.close": { params: SessionRef; result: Empty };
  /** Send /compact as a turn (what claude does headless). */
  "session.compact": { params: SessionRef; result: PromptResult };
  /** Start an agent session (spawn's session core), recorded to $AGENTJQ_HOME/sessions/<id>.rec. */
  "session.create": { params: CreateParams; result: CreateResult };
  /** Delete an ended session's recording (agentjq's own file only). */
  "session.deleteSaved": { params: SessionRef; result: Empty };
  /** A new session that starts from a session's conversation (claude --resume <its agentSessionId> --fork-session, in its workdir, with its create params): the source goes on unchanged, live or ended. atMessage forks at one of its messages (--resume-session-at: the conversation up to and including the agent line with that uuid). Fails invalid_params before the source's agent has started (no agentSessionId yet). */
  "session.fork": { params: ForkParams; result: CreateResult };
  /** Interrupt the turn in flight: claude's interrupt control request; the turn ends (turn.done), the session goes on. */
  "session.interrupt": { params: SessionRef; result: Empty };
  /** Live sessions and the recordings of ended ones, oldest first, each with its title; workdir and live narrow the list. */
  "session.list": { params: ListParams; result: ListResult };
  /** Send a user turn; returns at once with the turn's first seq (turn.started); turn.done ends it. */
  "session.prompt": { params: PromptParams; result: PromptResult };
  /** session.subscribe from afterSeq, all kinds; the result lists the approvals still pending. */
  "session.resume": { params: ResumeParams; result: SubscribeResult };
  /** set_permission_mode: default, acceptEdits, plan, bypassPermissions, dontAsk. */
  "session.setMode": { params: SetModeParams; result: Empty };
  /** Name a live session (a session.titled event; session.list shows it). */
  "session.setTitle": { params: SetTitleParams; result: Empty };
  /** Add a user message to the running turn: sent with a uuid, then claude's interrupt with send_now for it, so that it reaches the model now instead of after the turn: claude moves what the turn waits on to the background so the turn takes the message in, or stops the turn and answers the message next (sendNow stopped; what claude 2.1.328 and 2.1.332 do under a running Bash call). With no turn running it is a turn of its own. Returns once claude has answered. */
  "session.steer": { params: SteerParams; result: SteerResult };
  /** Events of a session: from the log after afterSeq (if given), then live, with no gap and no duplicate. kinds and a jq filter narrow them: the filter is the language of agentjq filter (agentlib included, no $ENV, no input), run on each session.event's params; an event is sent when its first output is truthy, and a program that does not compile fails invalid_params. */
  "session.subscribe": { params: SubscribeParams; result: SubscribeResult };
  /** Stop a subscription. */
  "session.unsubscribe": { params: SessionRef; result: Empty };
  /** A sign of life. */
  "system.health": { params: Empty; result: HealthResult };
  /** The handshake: must be the first call on every connection. */
  "system.hello": { params: HelloParams; result: HelloResult };
  /** Where the daemon runs and what it holds. */
  "system.info": { params: Empty; result: InfoResult };
  /** Close every session (staged shutdown) and exit. */
  "system.shutdown": { params: Empty; result: Empty };
  /** The agent's tools (from its init). */
  "tool.list": { params: SessionRef; result: ToolListResult };
}

export interface ServerRequests {
  /** Server to client: a permission request the policy chain left undecided. Answer with a Decision. */
  "approval.request": { params: ApprovalInfo; result: Decision };
}

export interface Notifications {
  /** Notification to every client: an approval is waiting. */
  "approval.pending": { params: ApprovalInfo; result: null };
  /** Notification to every client: an approval was answered. */
  "approval.resolved": { params: ResolvedParams; result: null };
  /** Notification: one event of a subscribed session. */
  "session.event": { params: Event; result: null };
  /** Notification: the daemon drops this client, and why. */
  "system.disconnect": { params: DisconnectParams; result: null };
}

/** A notification from the daemon: switch on method to narrow params. */
export type NotificationMessage = {
  [M in keyof Notifications]: { jsonrpc: "2.0"; method: M; params: Notifications[M]["params"] };
}[keyof Notifications];

/** A request from the daemon: answer it with the result of its method. */
export type ServerRequestMessage = {
  [M in keyof ServerRequests]: { jsonrpc: "2.0"; id: number | string; method: M; params: ServerRequests[M]["params"] };
}[keyof ServerRequests];

export interface EventPayloads {
  /** each raw line of the agent's stdout, for clients that want the protocol itself */
  "agent.line": AgentLinePayload;
  /** an approval is waiting for a client */
  "approval.pending": ApprovalEventPayload;
  /** an approval was answered */
  "approval.resolved": ApprovalEventPayload;
  /** an error of the agent or of agentjq (a warning, a failed turn) */
  "error": ErrorPayload;
  /** a text delta of a partial message (session.create partial: true passes --include-partial-messages; claude streams the main agent's messages only, a subagent's arrive whole) */
  "message.delta": MessageDeltaPayload;
  /** an assistant message, whole */
  "message.done": MessageDonePayload;
  /** the permission mode changed (init, session.setMode) */
  "mode.changed": ModeChangedPayload;
  /** the agent's process ended; the session can be read, not driven */
  "session.ended": SessionEndedPayload;
  /** the session's title was set (session.create's title, session.setTitle) */
  "session.titled": TitledPayload;
  /** a subagent ended, once: task_notification for a backgrounded Task (its status), else the Task call's tool_result (completed or failed) */
  "subagent.done": SubagentPayload;
  /** a subagent started, once per subagent: its Task/Agent tool call, or a task_started line without one (status started) */
  "subagent.spawn": SubagentPayload;
  /** a subagent's progress: task_started after its call (started), its messages (parent_tool_use_id; running), task_progress and task_updated (their status), a backgrounded Task's immediate tool_result (launched) */
  "subagent.update": SubagentPayload;
  /** a tool_use block of an assistant message */
  "tool.call": ToolCallPayload;
  /** a tool_result block of a user message */
  "tool.result": ToolResultPayload;
  /** the turn's result */
  "turn.done": TurnDonePayload;
  /** a turn was sent to the agent (session.prompt, command.run) */
  "turn.started": TurnStartedPayload;
  /** a user message sent to reach the model now (session.steer): claude takes it into the running turn, or stops that turn (its turn.done, error_during_execution) and answers the message in the next turn.done */
  "turn.steered": TurnStartedPayload;
  /** token usage and cost of a turn */
  "usage": UsagePayload;
}

export type EventKind = keyof EventPayloads;

export type ErrorCode =
  | "approval_denied"
  | "approval_resolved"
  | "approval_timeout"
  | "internal"
  | "invalid_params"
  | "mode_denied"
  | "not_found"
  | "not_implemented"
  | "overloaded"
  | "protocol_incompatible"
  | "resume_gap"
  | "session_ended"
  | "unauthorized";
