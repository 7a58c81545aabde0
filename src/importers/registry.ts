// The registered importers: an explicit list, checked for duplicates, one per ImporterId.
import { IMPORTER_IDS, type Importer, type ImporterId } from './types.ts';

const registered = new Map<ImporterId, () => Promise<Importer>>();

/** Loads an importer's module lazily, so a command pays only for the importer it runs. */
function loader(id: ImporterId): () => Promise<Importer> {
  switch (id) {
    case 'claude-code':
      return async () => (await import('./claude-code/index.ts')).claudeCodeImporter;
    case 'codex':
      return async () => (await import('./codex/index.ts')).codexImporter;
    case 'opencode':
      return async () => (await import('./opencode/index.ts')).opencodeImporter;
    case 'otlp':
      return async () => (await import('./otlp/index.ts')).otlpImporter;
    case 'acp':
      return async () => (await import('./acp/index.ts')).acpImporter;
    case 'gemini-cli':
      return async () => (await import('./gemini-cli/index.ts')).geminiCliImporter;
    case 'qwen-code':
      return async () => (await import('./qwen-code/index.ts')).qwenCodeImporter;
    case 'copilot-cli':
      return async () => (await import('./copilot-cli/index.ts')).copilotCliImporter;
    case 'pi-agent':
      return async () => (await import('./pi-agent/index.ts')).piAgentImporter;
    case 'openclaw':
      return async () => (await import('./openclaw/index.ts')).openclawImporter;
    case 'cline':
      return async () => (await import('./cline/index.ts')).clineImporter;
    case 'roo-code':
      return async () => (await import('./roo-code/index.ts')).rooCodeImporter;
    case 'kilo-code':
      return async () => (await import('./kilo-code/index.ts')).kiloCodeImporter;
    case 'kimi':
      return async () => (await import('./kimi/index.ts')).kimiImporter;
    case 'amp':
      return async () => (await import('./amp/index.ts')).ampImporter;
    case 'droid':
      return async () => (await import('./droid/index.ts')).droidImporter;
    case 'goose':
      return async () => (await import('./goose/index.ts')).gooseImporter;
    case 'hermes-agent':
      return async () => (await import('./hermes/index.ts')).hermesAgentImporter;
    case 'aider':
      return async () => (await import('./aider/index.ts')).aiderImporter;
    case 'codebuff':
      return async () => (await import('./codebuff/index.ts')).codebuffImporter;
    default: {
      const unhandled: never = id;
      throw new Error(`No importer for ${String(unhandled)}`);
    }
  }
}

for (const id of IMPORTER_IDS) {
  if (registered.has(id)) throw new Error(`Importer ${id} registered twice`);
  registered.set(id, loader(id));
}

export function isImporterId(name: string): name is ImporterId {
  return (IMPORTER_IDS as readonly string[]).includes(name);
}

export async function loadImporter(id: ImporterId): Promise<Importer> {
  const load = registered.get(id);
  if (!load) throw new Error(`No importer for ${id}`);
  const importer = await load();
  if (importer.id !== id) throw new Error(`Importer module for ${id} exports ${importer.id}`);
  return importer;
}
