// Context windows per model, in tokens: the shipped table, overridable with --models FILE
// (a JSON object { "model-name": windowTokens }). A model matches its own name, or a name it
// starts with followed by '-' (dated snapshots: claude-sonnet-4-5-20250929), after dropping a
// provider prefix ("anthropic/claude-sonnet-4-5"). An unknown model gets no window: it is
// flagged, never guessed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export const SHIPPED_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  // Anthropic (standard 200k windows; the 1M-token beta is opt-in per request and is reported
  // through context_window_tokens when a harness knows it).
  'claude-opus-4-5': 200_000,
  'claude-opus-4-1': 200_000,
  'claude-opus-4': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
  // OpenAI, as Codex configures them (model_context_window).
  'gpt-5': 272_000,
  'gpt-5-codex': 272_000,
  'gpt-5.1': 272_000,
  'gpt-5.1-codex': 272_000,
  'gpt-5-mini': 272_000,
  'gpt-4.1': 1_047_576,
  'o3': 200_000,
  'o4-mini': 200_000,
  // xAI
  'grok-4': 256_000,
  'grok-4-fast': 2_000_000,
  'grok-code-fast-1': 256_000,
  'grok-3': 131_072,
  // Google
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
};

/**
 * The schema of a user's model table. zod is loaded only when a file is given: every command
 * builds the shipped table, and loading zod costs ~90 ms of start-up that most never need.
 */
function modelTableSchema(): import('zod').ZodType<Record<string, number>> {
  const { z } = createRequire(import.meta.url)('zod') as typeof import('zod');
  return z.record(z.string().min(1), z.number().int().positive());
}

/** Model names whose window a table remembers before it forgets them all (a run sees a few). */
const LOOKUP_MEMO_SIZE = 1024;

export class ModelTable {
  /** Each name, the name followed by '-' (a dated or suffixed variant), and its window. */
  private readonly entries: [string, string, number][];
  /** Windows already looked up, by the model name as given (every accounted event asks). */
  private readonly memo = new Map<string, number | undefined>();

  constructor(windows: Readonly<Record<string, number>> = SHIPPED_CONTEXT_WINDOWS) {
    // Longest names first, so claude-sonnet-4-5 wins over claude-sonnet-4.
    this.entries = Object.entries(windows)
      .sort((a, b) => b[0].length - a[0].length)
      .map(([name, window]) => [name, `${name}-`, window]);
  }

  /** The shipped table with a user's file laid over it. */
  static withOverrides(file: string | undefined): ModelTable {
    if (file === undefined) return new ModelTable();
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new Error(`${file}: cannot read the model table: ${(error as Error).message}`);
    }
    const result = modelTableSchema().safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new Error(`${file}: model table must map model names to positive integer token counts (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`);
    }
    return new ModelTable({ ...SHIPPED_CONTEXT_WINDOWS, ...result.data });
  }

  /** The context window of a model, or undefined when the table does not know it. */
  contextWindow(model: string): number | undefined {
    if (this.memo.has(model)) return this.memo.get(model);
    const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
    let found: number | undefined;
    for (const [key, keyDash, window] of this.entries) {
      if (name === key || name.startsWith(keyDash)) {
        found = window;
        break;
      }
    }
    if (this.memo.size >= LOOKUP_MEMO_SIZE) this.memo.clear();
    this.memo.set(model, found);
    return found;
  }
}
