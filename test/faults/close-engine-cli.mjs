// The real CLI (src/cli/main.ts run(), as bin/toolcanon.mjs runs it) with one fault: the sink's
// embedded engine is closed in the middle of a batch, after the batch's dead letters were inserted
// and before its tool calls are (the Nth tool-call insert of the process, N from
// $TOOLCANON_TEST_CLOSE_ENGINE_AT). The close is the sink's own close(): the engine is really
// gone, and every request after it fails as it would in production. Used by engine-closed.test.ts.
import { register } from 'tsx/esm/api';

register();
const { ClickHouseSink } = await import('../../src/sink/clickhouse.ts');
const at = Number(process.env.TOOLCANON_TEST_CLOSE_ENGINE_AT);
if (!Number.isSafeInteger(at) || at < 1) throw new Error('TOOLCANON_TEST_CLOSE_ENGINE_AT must be a positive integer');
const writeToolCalls = ClickHouseSink.prototype.writeToolCalls;
let calls = 0;
ClickHouseSink.prototype.writeToolCalls = async function (batch) {
  calls++;
  if (calls === at) await this.close();
  return writeToolCalls.call(this, batch);
};
const { run } = await import('../../src/cli/main.ts');
await run(process.argv.slice(2));
