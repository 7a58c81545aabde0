// Where Kilo Code keeps its task folders: its extension's globalStorage.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { existingOrFirst, globalStorageDirs } from '../cline/paths.ts';

/** Kilo Code's extension id (Kilo-Org/kilocode src/package.json and packages/kilo-vscode/package.json: publisher kilocode, name kilo-code). */
export const KILO_EXTENSION_ID = 'kilocode.kilo-code';

/** The globalStorage folders of Kilo Code that exist (every VS Code-based editor), else VS Code's. */
export function defaultKiloPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string[] {
  return existingOrFirst(globalStorageDirs(KILO_EXTENSION_ID, env, home, platform), exists);
}
