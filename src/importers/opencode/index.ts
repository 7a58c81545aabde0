// The opencode importer: storage files (`~/.local/share/opencode/storage`) and `opencode run
// --format json` captures. A storage part names its message only by id: the message file (model,
// turn) is read here, so the parser stays pure.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_DOCUMENT_BYTES, type Importer, type ParsedFile } from '../types.ts';
import { opencodeReading, parseOpencodeFile } from './parser.ts';
import { defaultOpencodePaths, listOpencodeFiles, storageKind, storageRoot } from './paths.ts';
import { isObject, readMessage, type OpencodeMessage } from './types.ts';

/** Message files read recently (parts of one message sit side by side in sorted order). */
const messageCache = new Map<string, { mtimeMs: number; size: number; message: OpencodeMessage | undefined }>();
const MESSAGE_CACHE_ENTRIES = 256;

function readMessageFile(path: string): OpencodeMessage | undefined {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  const cached = messageCache.get(path);
  if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.message;
  let message: OpencodeMessage | undefined;
  try {
    message = readMessage(JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, '')));
  } catch {
    message = undefined;
  }
  if (messageCache.size >= MESSAGE_CACHE_ENTRIES) messageCache.clear();
  messageCache.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, message });
  return message;
}

/** Message ids of a session folder whose file names are not the ids, by folder (rebuilt when it changes). */
const sessionIndexes = new Map<string, { mtimeMs: number; byId: Map<string, OpencodeMessage> }>();

function sessionIndex(sessionDir: string): ReadonlyMap<string, OpencodeMessage> {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(sessionDir).mtimeMs;
  } catch {
    return new Map();
  }
  const cached = sessionIndexes.get(sessionDir);
  if (cached && cached.mtimeMs === mtimeMs) return cached.byId;
  const byId = new Map<string, OpencodeMessage>();
  let names: string[];
  try {
    names = readdirSync(sessionDir).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return byId;
  }
  for (const name of names) {
    const message = readMessageFile(join(sessionDir, name));
    if (message) byId.set(message.id, message);
  }
  if (sessionIndexes.size >= 64) sessionIndexes.clear();
  sessionIndexes.set(sessionDir, { mtimeMs, byId });
  return byId;
}

/**
 * The message of a storage part: `message/<sessionID>/<messageID>.json`, or, when the file is
 * named otherwise (hand-made fixtures), the file of that session whose `id` matches.
 */
function findPartMessage(partPath: string, data: Buffer): OpencodeMessage | undefined {
  let part: unknown;
  try {
    part = JSON.parse(data.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (!isObject(part) || typeof part['sessionID'] !== 'string' || typeof part['messageID'] !== 'string') return undefined;
  const sessionDir = join(storageRoot(partPath), 'message', part['sessionID']);
  const direct = readMessageFile(join(sessionDir, `${part['messageID']}.json`));
  if (direct) return direct;
  return sessionIndex(sessionDir).get(part['messageID']);
}

export const opencodeImporter: Importer = {
  id: 'opencode',
  harnesses: ['opencode'],
  samples: { fixtures: [], corpus: ['samples/opencode'] },
  description: 'opencode storage (message/ and part/ JSON files) and `opencode run --format json` captures',
  defaultPaths: () => defaultOpencodePaths(),
  listFiles: (paths) => listOpencodeFiles(paths),
  parseFile(path: string, data: Buffer): ParsedFile {
    if (storageKind(path) !== 'part') return parseOpencodeFile(path, data);
    const message = findPartMessage(path, data);
    return parseOpencodeFile(path, data, message ? { messages: new Map([[message.id, message]]) } : {});
  },
  // A `.json` file (a storage object, an export) is one JSON document, read whole up to its
  // limit; anything else (`run --format json` captures, bus logs, dumps) is JSONL, streamed in two passes.
  readingOf: (path) => (path.endsWith('.json') ? { kind: 'document', maxBytes: MAX_DOCUMENT_BYTES } : { kind: 'lines', reading: opencodeReading(path) }),
};
