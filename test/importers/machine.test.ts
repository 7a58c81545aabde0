// The importing machine (issue 16): host and device id from flags, the environment, the machine
// id or an id created once; the machine spliced into an envelope line; the --to-kafka state file.
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createdDeviceId, deviceIdFromMachineId, importingMachine, MachineError, withMachine } from '../../src/importers/machine.ts';
import { fileImportState, ImportStateError, stateFilePath } from '../../src/pipeline/import-state-file.ts';
import { makeTempDir } from '../helpers/db.ts';

const tmp = makeTempDir('machine');
afterAll(() => tmp.cleanup());

describe('the importing machine', () => {
  const machineId = join(tmp.dir, 'machine-id');
  writeFileSync(machineId, '0123456789abcdef0123456789ABCDEF\n');

  it('takes flags first, then the environment, then the machine itself', () => {
    const env = { TOOLCANON_HOST: 'env-host', TOOLCANON_DEVICE_ID: 'env-dev' };
    expect(importingMachine({ host: 'flag-host', deviceId: 'flag-dev', env, machineIdFiles: [machineId] })).toEqual({ host: 'flag-host', device_id: 'flag-dev' });
    expect(importingMachine({ env, machineIdFiles: [machineId] })).toEqual({ host: 'env-host', device_id: 'env-dev' });
    expect(importingMachine({ env: {}, machineIdFiles: [machineId], stateDir: join(tmp.dir, 'unused') }).host).toBe(hostname());
  });

  it('derives the device id from the machine id (HMAC, the id itself never shown), stable across calls', () => {
    // Computed here from the HMAC's definition: key = the machine id (lower case), message = the label.
    const expected = createHmac('sha256', '0123456789abcdef0123456789abcdef').update('toolcanon device id').digest('hex').slice(0, 32);
    expect(deviceIdFromMachineId([join(tmp.dir, 'missing'), machineId])).toBe(expected);
    expect(importingMachine({ env: {}, machineIdFiles: [machineId] }).device_id).toBe(expected);
    expect(expected).not.toContain('0123456789abcdef');
    writeFileSync(join(tmp.dir, 'bad-id'), 'not an id\n');
    expect(deviceIdFromMachineId([join(tmp.dir, 'bad-id')])).toBeUndefined();
  });

  it('creates a device id once in the state directory when the machine has no machine id', () => {
    const dir = join(tmp.dir, 'state');
    const a = importingMachine({ env: {}, machineIdFiles: [join(tmp.dir, 'missing')], stateDir: dir }).device_id;
    const b = importingMachine({ env: {}, machineIdFiles: [], stateDir: dir }).device_id;
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toBe(a);
    expect(readFileSync(join(dir, 'device-id'), 'utf8').trim()).toBe(a);
    expect(createdDeviceId(join(tmp.dir, 'other-state'))).not.toBe(a);
  });

  it('refuses a host or device id longer than the envelope takes', () => {
    expect(() => importingMachine({ host: 'h'.repeat(257), deviceId: 'd' })).toThrow(MachineError);
    expect(() => importingMachine({ host: 'h', deviceId: 'd'.repeat(129) })).toThrow(/at most 128/);
  });
});

describe('withMachine', () => {
  const m = { host: 'box "1"', device_id: 'dev-1' };

  it('puts the machine in front of the line, leaving the rest byte for byte', () => {
    const line = '{"schema":"toolcanon.event/v1","input":{"n":12345678901234567890,"s":"\\u00e9"}}';
    const out = withMachine(line, m);
    expect(out).toBe(`{"host":"box \\"1\\"","device_id":"dev-1",${line.slice(1)}`);
    expect((JSON.parse(out) as { host: string }).host).toBe('box "1"');
    expect(withMachine('{}', m)).toBe('{"host":"box \\"1\\"","device_id":"dev-1"}');
  });

  it('keeps a machine the event names, and text that only mentions one', () => {
    const own = '{"host":"elsewhere","session_id":"s"}';
    expect(withMachine(own, m)).toBe(own);
    const onlyDevice = '{"device_id":"d9","session_id":"s"}';
    expect(withMachine(onlyDevice, m)).toBe(onlyDevice);
    const mention = '{"session_id":"s","input":{"host":"db.internal"}}';
    expect(JSON.parse(withMachine(mention, m))).toEqual({ host: 'box "1"', device_id: 'dev-1', session_id: 's', input: { host: 'db.internal' } });
    expect(withMachine('not json "host"', m)).toBe('not json "host"');
  });
});

describe('the --to-kafka import state file', () => {
  it('starts empty, keeps the records of files not read again, and replaces the file whole', async () => {
    const dir = join(tmp.dir, 'import-state');
    const state = fileImportState(dir);
    expect((await state.load('codex')).size).toBe(0);
    await state.save('codex', new Map([['/a', { sizeBytes: 10, mtimeMs: 1.5, completeBytes: 10 }], ['/b', { sizeBytes: 20, mtimeMs: 2, completeBytes: 15 }]]), '2026-12-03 00:00:00.000');
    await state.save('codex', new Map([['/b', { sizeBytes: 30, mtimeMs: 3, completeBytes: 30 }]]), '2026-12-03 01:00:00.000');
    expect([...(await state.load('codex'))].sort()).toEqual([
      ['/a', { sizeBytes: 10, mtimeMs: 1.5, completeBytes: 10 }],
      ['/b', { sizeBytes: 30, mtimeMs: 3, completeBytes: 30 }],
    ]);
    expect((await state.load('claude-code')).size).toBe(0);
  });

  it('says which file is not a state it can read (never a crash, never a silent re-import)', async () => {
    const dir = join(tmp.dir, 'broken-state');
    const state = fileImportState(dir);
    await state.save('codex', new Map(), '2026-12-03 00:00:00.000');
    writeFileSync(stateFilePath(dir, 'codex'), '{"version":1,"files":{"/a":{"sizeBytes":"x"}}}');
    await expect(state.load('codex')).rejects.toThrow(ImportStateError);
    writeFileSync(stateFilePath(dir, 'codex'), '{not json');
    await expect(state.load('codex')).rejects.toThrow(`the import state ${stateFilePath(dir, 'codex')} is not JSON`);
  });
});
