// Reading a line-format file through its LineReading: in chunks from disk (the runner), or from a
// buffer already in memory (parseFile, for tests and callers that hold the bytes). Both go
// through the same LineSplitter and the same parser, so they give the same events.
import { open } from 'node:fs/promises';
import { LineSplitter, type RawLine } from './lines.ts';
import type { ImportedEvent, LineReading, MalformedRecord, ParsedFile } from './types.ts';

/** Bytes read from disk at a time. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** Parses a whole file held in memory through a streaming reading: what parseFile returns. */
export function parseLinesWith(reading: LineReading, data: Buffer): ParsedFile {
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  let recordsRead = 0;
  if (reading.scan) {
    const scan = reading.scan;
    const splitter = new LineSplitter();
    splitter.push(data, scan);
    splitter.end(scan);
  }
  const parser = reading.parser({ event: (e) => events.push(e), malformed: (m) => malformed.push(m) });
  const splitter = new LineSplitter();
  const feed = (line: RawLine): void => {
    recordsRead++;
    parser.line(line);
  };
  splitter.push(data, feed);
  splitter.end(feed);
  parser.end();
  return { events, malformed, completeBytes: splitter.completeBytes, recordsRead: parser.recordsRead ?? recordsRead, skipped: parser.skipped };
}

export interface ChunkedRead {
  /** Bytes up to the end of the last complete line. */
  readonly completeBytes: number;
  /** Bytes read from the file. */
  readonly bytesRead: number;
  /** Complete, non-blank lines handed to `onLine`. */
  readonly lines: number;
}

export interface ChunkedReadOptions {
  /** Bytes read at a time (READ_CHUNK_BYTES unless a test wants more chunks). */
  readonly chunkBytes?: number;
  /** Read no further than this offset (a file still being written may have grown since). */
  readonly limitBytes?: number;
  /** Called after each chunk is split, with the file offset reached and the bytes held. */
  readonly onChunk?: (bytesRead: number, heldBytes: number) => void;
}

/**
 * Reads a file in chunks and hands its complete lines to `onLine`, awaiting it when it returns
 * a promise (the runner flushes a batch there, so reading waits for the sink). What is held is
 * one chunk plus the line that spans chunks, whatever the file's size.
 */
export async function readLinesInChunks(path: string, onLine: (line: RawLine) => void | Promise<void>, options: ChunkedReadOptions = {}): Promise<ChunkedRead> {
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  const limit = options.limitBytes ?? Number.POSITIVE_INFINITY;
  const splitter = new LineSplitter();
  const handle = await open(path, 'r');
  let bytesRead = 0;
  let lines = 0;
  const pending: RawLine[] = [];
  const collect = (line: RawLine): void => {
    pending.push(line);
  };
  const drain = async (): Promise<void> => {
    for (const line of pending) {
      lines++;
      const r = onLine(line);
      if (r !== undefined) await r;
    }
    pending.length = 0;
  };
  try {
    for (;;) {
      const want = Math.min(chunkBytes, limit - bytesRead);
      if (want <= 0) break;
      // A fresh buffer per chunk: lines handed out are views into it and may outlive the read.
      const chunk = Buffer.allocUnsafe(want);
      const { bytesRead: n } = await handle.read(chunk, 0, want, bytesRead);
      if (n === 0) break;
      bytesRead += n;
      splitter.push(n === want ? chunk : chunk.subarray(0, n), collect);
      options.onChunk?.(bytesRead, splitter.heldBytes);
      await drain();
    }
    splitter.end(collect);
    await drain();
  } finally {
    await handle.close();
  }
  return { completeBytes: splitter.completeBytes, bytesRead, lines };
}
