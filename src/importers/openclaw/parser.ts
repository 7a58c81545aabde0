// OpenClaw transcripts are pi session files (OpenClaw embeds pi's session manager): the pi
// parser reads them, naming the harness `openclaw` and taking a headerless file's session from
// OpenClaw's file names. What differs is in README.md.
import { PiParser } from '../pi-agent/parser.ts';
import { parseLinesWith } from '../stream.ts';
import type { LineReading, ParsedFile } from '../types.ts';
import { sessionOfFile } from './paths.ts';

/** How one transcript is read: one streaming pass of pi's parser. */
export function openclawReading(path: string): LineReading {
  return { parser: (output) => new PiParser({ path, harness: 'openclaw', sessionOfFile }, output) };
}

/** Parses a whole transcript held in memory (tests, and callers that hold the bytes). */
export function parseOpenclawFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(openclawReading(path), data);
}
