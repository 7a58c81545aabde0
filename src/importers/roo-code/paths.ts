// Where Roo Code keeps its task folders: its extension's globalStorage (or the folder its
// `roo-cline.customStoragePath` setting names, which the user gives as a path).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { existingOrFirst, globalStorageDirs } from '../cline/paths.ts';

/** Roo Code's extension id (RooCodeInc/Roo-Code src/package.json: publisher RooVeterinaryInc, name roo-cline; VS Code lowercases the folder). */
export const ROO_EXTENSION_ID = 'rooveterinaryinc.roo-cline';

/** The globalStorage folders of Roo Code that exist (every VS Code-based editor), else VS Code's. */
export function defaultRooPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string[] {
  return existingOrFirst(globalStorageDirs(ROO_EXTENSION_ID, env, home, platform), exists);
}

/** The history_item.json beside a task file (Roo Code 3.4x on: the task's HistoryItem, with its parent and root task). */
export function historyItemPath(taskFile: string): string {
  return join(taskFile, '..', 'history_item.json');
}
