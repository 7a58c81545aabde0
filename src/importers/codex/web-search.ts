// Codex writes a `web_search_call` response item without its id in some builds (cli 0.125:
// `{"type":"web_search_call","status":"completed","action":{…}}`), and, in the "Extended"
// persistence mode, a `web_search_end` event that carries it: Codex derives that event from the
// same completed item (`call_id` = the item's id, `action` = the item's action; codex-rs
// `event_mapping.rs`, WebSearchCall → WebSearchEnd), and records the item before the event. So a
// call without an id takes the `call_id` of the first later `web_search_end` whose action is the
// call's (compared as JSON with sorted keys; an end without an action is compared by its
// `query` with the action's query), that no call with that id claims, and that no earlier call
// took. A call that finds none (the default "Limited" mode writes no end events) keeps being
// known by its line.
import { isObject, type JsonObject } from '../json.ts';

/** JSON text with object keys sorted: two serialisations of one action compare equal. */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Id-less calls waiting for their end at once; past this the oldest is given up (a Limited-mode file writes no ends at all). */
const MAX_WAITING = 1024;

interface Waiting {
  readonly lineNo: number;
  readonly action: string;
  readonly query: string | undefined;
}

/** The pairing of id-less web_search_call records with their web_search_end events, over one file in line order. */
export class WebSearchPairing {
  private readonly waiting: Waiting[] = [];
  /** Ids named by calls that carry one, and ids already given to an id-less call. */
  private readonly taken = new Set<string>();
  private readonly ids = new Map<number, string>();

  /** A web_search_call response item (its payload) at `lineNo`. */
  call(lineNo: number, item: JsonObject): void {
    const id = item['id'];
    if (typeof id === 'string' && id !== '') {
      this.taken.add(id);
      return;
    }
    const action = item['action'];
    if (!isObject(action)) return;
    const query = action['query'];
    this.waiting.push({ lineNo, action: sortedJson(action), query: typeof query === 'string' ? query : undefined });
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
  }

  /** A web_search_end event (its payload). */
  end(event: JsonObject): void {
    const callId = event['call_id'];
    if (typeof callId !== 'string' || callId === '' || this.taken.has(callId)) return;
    const action = event['action'];
    const query = event['query'];
    const matches = isObject(action)
      ? (w: Waiting): boolean => w.action === sortedJson(action)
      : typeof query === 'string'
        ? (w: Waiting): boolean => w.query === query
        : (): boolean => true;
    const at = this.waiting.findIndex(matches);
    if (at < 0) return;
    const [w] = this.waiting.splice(at, 1);
    if (w === undefined) return;
    this.taken.add(callId);
    this.ids.set(w.lineNo, callId);
  }

  /** The id an id-less web_search_call at `lineNo` takes from its end event, if one was found. */
  idAt(lineNo: number): string | undefined {
    return this.ids.get(lineNo);
  }
}
