// The importing machine: a host name and a stable device id, recorded on every row an import
// writes (or every event it publishes) unless the event names its own machine. One warehouse
// fed by many machines tells them apart by these two fields.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Machine } from '../decode/event.ts';

/** Where systemd and D-Bus keep the machine id (Linux). */
export const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id'] as const;

/** The file in the import state directory holding a device id created once (machines without a machine id). */
export const DEVICE_ID_FILE = 'device-id';

/** Longest host and device id the envelope takes (schemas/*.schema.json). */
export const MAX_HOST_CHARS = 256;
export const MAX_DEVICE_ID_CHARS = 128;

/** The import state directory: what `import --to-kafka` has read of each file, and a created device id. */
export function defaultImportStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env['TOOLCANON_IMPORT_STATE'];
  return resolve(fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.toolcanon', 'import-state'));
}

export interface MachineOptions {
  /** --host; else $TOOLCANON_HOST; else os.hostname(). */
  readonly host?: string | undefined;
  /** --device-id; else $TOOLCANON_DEVICE_ID; else derived from the machine id; else created once in stateDir. */
  readonly deviceId?: string | undefined;
  readonly stateDir?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** The machine-id files to read (tests point them elsewhere). */
  readonly machineIdFiles?: readonly string[];
}

/** A value a machine field cannot take (the command line reports it as a usage error). */
export class MachineError extends Error {
  override readonly name = 'MachineError';
}

function checked(value: string, what: string, max: number): string {
  if (value.length > max) throw new MachineError(`${what} must be at most ${max} characters, got ${value.length}`);
  return value;
}

/**
 * The machine an import records. The device id derived from the machine id is an HMAC of a
 * fixed application label keyed by it (what systemd's sd_id128_get_machine_app_specific
 * recommends): stable across runs and reinstalls of toolcanon, and the machine id itself is
 * never written anywhere.
 */
export function importingMachine(options: MachineOptions = {}): Machine {
  const env = options.env ?? process.env;
  const host = options.host ?? (env['TOOLCANON_HOST'] !== undefined && env['TOOLCANON_HOST'] !== '' ? env['TOOLCANON_HOST'] : hostname());
  const deviceId =
    options.deviceId ??
    (env['TOOLCANON_DEVICE_ID'] !== undefined && env['TOOLCANON_DEVICE_ID'] !== ''
      ? env['TOOLCANON_DEVICE_ID']
      : (deviceIdFromMachineId(options.machineIdFiles ?? MACHINE_ID_FILES) ?? createdDeviceId(options.stateDir ?? defaultImportStateDir(env))));
  return { host: checked(host, 'the host (--host, $TOOLCANON_HOST)', MAX_HOST_CHARS), device_id: checked(deviceId, 'the device id (--device-id, $TOOLCANON_DEVICE_ID)', MAX_DEVICE_ID_CHARS) };
}

/** 32 hex digits from the first readable machine id, or undefined when there is none. */
export function deviceIdFromMachineId(files: readonly string[]): string | undefined {
  for (const file of files) {
    let id: string;
    try {
      id = readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    if (/^[0-9a-fA-F]{32}$/.test(id)) return createHmac('sha256', id.toLowerCase()).update('toolcanon device id').digest('hex').slice(0, 32);
  }
  return undefined;
}

/** The device id kept in the state directory, created (a random UUID) the first time. */
export function createdDeviceId(stateDir: string): string {
  const file = join(stateDir, DEVICE_ID_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept !== '') return kept;
  } catch {
    // Not created yet.
  }
  const id = randomUUID();
  mkdirSync(stateDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${id}\n`);
  renameSync(tmp, file);
  // Two processes creating it at once: the file that won the rename is the id.
  return readFileSync(file, 'utf8').trim();
}

/**
 * The envelope line with the machine's fields, unless it names a machine itself (an importer
 * that read one from its logs): `{"host":…,"device_id":…,` spliced in front of the line's own
 * members, so the rest of the line (its raw input above all) stays byte for byte.
 */
export function withMachine(line: string, machine: Machine): string {
  if (!line.startsWith('{')) return line;
  if (line.includes('"host"') || line.includes('"device_id"')) {
    // Maybe a field of its own, maybe only text inside a value: the parsed object says.
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return line; // not JSON: published as it is, for the worker to dead-letter
    }
    if (typeof parsed === 'object' && parsed !== null && ('host' in parsed || 'device_id' in parsed)) return line;
  }
  const rest = line.slice(1).trimStart();
  return `{"host":${JSON.stringify(machine.host)},"device_id":${JSON.stringify(machine.device_id)}${rest.startsWith('}') ? '' : ','}${rest}`;
}
