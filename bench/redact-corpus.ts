// The redaction corpus through the real decoder (issue 30): recall on the positives (every rule,
// in plain, JSON-escaped and argv forms) and false positives on the negatives (real-looking code,
// commands and logs). Targets: recall 100 %, 0 false positives (test/redact/corpus.test.ts).
//   npx tsx bench/redact-corpus.ts [--verbose]
import { decodeEvent, DEFAULT_LIMITS } from '../src/decode/event.ts';
import { evaluateCorpus, NEGATIVES, POSITIVES } from '../test/redact/corpus.ts';

const verbose = process.argv.includes('--verbose');
const started = performance.now();
const result = evaluateCorpus((line) => {
  const o = decodeEvent(Buffer.from(line), 'corpus.jsonl:1', '2026-12-06 10:00:00.000', DEFAULT_LIMITS);
  return o.kind === 'row' ? { kind: o.kind, row: o.row as unknown as Record<string, unknown> } : { kind: o.kind };
});
const ms = performance.now() - started;
const rules = new Set(POSITIVES.map((p) => p.rule));
const forms = POSITIVES.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.form]: (acc[p.form] ?? 0) + 1 }), {});
console.log(`positives: ${result.positives} (${rules.size} rules; ${Object.entries(forms).map(([f, n]) => `${n} ${f}`).join(', ')})`);
console.log(`recall: ${result.caught} / ${result.positives} = ${((100 * result.caught) / result.positives).toFixed(2)} %`);
console.log(`negatives: ${result.negatives} (${new Set(NEGATIVES.map((n) => n.what)).size} kinds)`);
console.log(`false positives: ${result.falsePositives.length}`);
console.log(`decoded ${result.positives + result.negatives} events in ${ms.toFixed(0)} ms`);
if (verbose || result.missed.length + result.falsePositives.length > 0) {
  for (const m of result.missed) console.log(`  missed ${m.id} (${m.rule}): ${m.leaked.join(', ')}`);
  for (const f of result.falsePositives) console.log(`  false positive ${f.id} (${f.what}): ${f.stored.slice(0, 200)}`);
}
