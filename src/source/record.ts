// The one drive loop. Every source (a file's lines, an importer's events, a Kafka batch's records)
// hands its records in its order to a target (the database through a BatchWriter, a Kafka
// topic, the stream worker's generation), each with its position: `file:line` for a file-fed
// source, topic/partition/offset for Kafka. An add says whether the target wants the source to
// wait (a batch is due): the source then awaits due() before it reads on.

/** Where a source's records go, in the source's order. */
export interface RecordTarget<Line, Position> {
  /** One record (an envelope line, as bytes or text) at its position; true when the source must await due(). */
  addEvent(line: Line, at: Position): boolean;
  /**
   * A raw record the source could not read (`detail` says why), at its position; true when the
   * source must await due(). Only sources that can meet one (importers) need a target taking it.
   */
  addMalformed?(raw: Buffer, detail: string, at: Position): boolean;
  /** Starts writing a due batch; the target may keep it in flight while the source reads on. */
  due(): Promise<void>;
  /** Resolves when everything added is acknowledged (stored, or taken by the broker). */
  flush(): Promise<void>;
}

/**
 * What a source calls for each record it reads. When a call returns a promise, the source awaits
 * it before it reads the next record.
 */
export interface RecordTake<Line, Position> {
  event(line: Line, at: Position): Promise<void> | undefined;
  malformed(raw: Buffer, detail: string, at: Position): Promise<void> | undefined;
}

/** A source of records: read() hands each record to `take` in order and resolves at the source's end. */
export interface RecordSource<Line, Position> {
  read(take: RecordTake<Line, Position>): Promise<void>;
}

/**
 * Hands every record of `source` to `target`, awaiting the target's due() whenever an add asks
 * for it. Does not flush: a file-fed run flushes at its end (drive), the stream worker when its
 * batch is due, its time is up or it stops.
 */
export function pump<Line, Position>(source: RecordSource<Line, Position>, target: RecordTarget<Line, Position>): Promise<void> {
  return source.read({
    event: (line, at) => (target.addEvent(line, at) ? target.due() : undefined),
    malformed: (raw, detail, at) => {
      if (!target.addMalformed) throw new TypeError(`A malformed record at ${String(at)} reached a target that takes none.`);
      return target.addMalformed(raw, detail, at) ? target.due() : undefined;
    },
  });
}

/** A file-fed run: every record of `source` into `target`, then flush (everything acknowledged). */
export async function drive<Line, Position>(source: RecordSource<Line, Position>, target: RecordTarget<Line, Position>): Promise<void> {
  await pump(source, target);
  await target.flush();
}
