// The transcript file names OpenClaw writes in agents/<agent>/sessions/ (openclaw/openclaw
// src/config/sessions/paths.ts and artifacts.ts). The entries inside are pi's: ../pi-agent/types.ts.

const ARCHIVE_TIME = String.raw`\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z`;
/** `<id>.jsonl.reset.<time>` and `<id>.jsonl.deleted.<time>`: a transcript archived by /reset or a deletion. */
const ARCHIVED = new RegExp(String.raw`^(.+)\.jsonl\.(?:reset|deleted)\.${ARCHIVE_TIME}$`);
/** `<id>.checkpoint.<uuid>.jsonl`: the copy taken before a compaction. */
const CHECKPOINT = /^(.+)\.checkpoint\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/i;

/** Whether a file name is a transcript whose usage OpenClaw counts (isUsageCountedSessionTranscriptFileName). */
export function isTranscriptName(name: string): boolean {
  if (ARCHIVED.test(name)) return true;
  if (!name.endsWith('.jsonl')) return false;
  return !name.endsWith('.trajectory.jsonl');
}

/** The session id a transcript's name carries (the header's `id` is preferred when the file has one). */
export function sessionOfName(name: string): string {
  const id = ARCHIVED.exec(name)?.[1] ?? CHECKPOINT.exec(name)?.[1] ?? name.replace(/\.jsonl$/, '');
  return id === '' ? 'unknown' : id.slice(0, 256);
}
