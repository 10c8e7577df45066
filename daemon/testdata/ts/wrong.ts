// What the union refuses (TestTypeScriptStrictClient: each line must
// fail to compile): a payload read before its kind is known, a kind that
// does not exist, a decision that is neither allow nor deny.
import type { Decision, Event } from "./protocol";

export function result(ev: Event): string | undefined {
  return ev.payload.result;
}

export function misspelt(ev: Event): boolean {
  return ev.kind === "turn.finished";
}

export const maybe: Decision = { decision: "maybe" };
