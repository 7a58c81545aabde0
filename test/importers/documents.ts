// The whole-document formats the contract and fuzz suites generate from an importer's fixture
// documents: a JSON array of elements (Cline's task files), or an object whose `messages` array
// holds them (an Amp thread), its other members kept as they were, on the first line.

/** How a document holds its elements: `head` is the object's other members as compact JSON without the closing brace; undefined for an array. */
export interface DocumentShape {
  readonly head: string | undefined;
}

const MEMBER = 'messages';

/** A fixture document's elements and shape. */
export function elementsOf(value: unknown): { elements: unknown[]; shape: DocumentShape } {
  if (Array.isArray(value)) return { elements: value, shape: { head: undefined } };
  if (typeof value === 'object' && value !== null && Array.isArray((value as Record<string, unknown>)[MEMBER])) {
    const { [MEMBER]: elements, ...rest } = value as Record<string, unknown>;
    const head = JSON.stringify(rest).slice(0, -1);
    return { elements: elements as unknown[], shape: { head } };
  }
  throw new Error('a fixture document is neither an array nor an object with a messages array');
}

/** True for a value that is a document of the shape (an array; an object with a `messages` array). */
export function isDocument(value: unknown, shape: DocumentShape): boolean {
  if (shape.head === undefined) return Array.isArray(value);
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as Record<string, unknown>)[MEMBER]);
}

/** A document of the shape holding the elements' texts, compact or pretty, and each element's line. */
export function documentText(elements: readonly string[], shape: DocumentShape, pretty: boolean): { text: string; lineOf: number[] } {
  const lineOf: number[] = [];
  let text = shape.head === undefined ? '[' : `${shape.head}${shape.head === '{' ? '' : ','}"${MEMBER}":[`;
  let line = 1;
  elements.forEach((e, i) => {
    if (i > 0) text += ',';
    if (pretty) {
      text += '\n  ';
      line++;
    }
    lineOf.push(line);
    text += e;
    line += (e.match(/\n/g) ?? []).length;
  });
  text += pretty ? '\n]' : ']';
  if (shape.head !== undefined) text += '}';
  return { text, lineOf };
}
