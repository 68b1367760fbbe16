#!/usr/bin/env node
// Builds dist/ (`npm run build`: tsc and the panel's vite build) unless it was built from exactly
// the sources there are now, so `npm start` and the tests start at once when nothing changed.
// A digest of every input's path and bytes, not mtimes: a checkout or a copy changes mtimes alone.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What dist/ is built from (tsconfig.build.json's includes and the panel's vite root), and how. */
const INPUTS = [
  'main.ts', 'cli', 'core', 'gateway', 'projections', 'webhook-delivery', 'api', 'panel', 'test/simulator', 'test/bench', 'test/support',
  'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'vite.config.ts',
];
const STAMP = join(ROOT, 'dist', '.sources-sha256');

/** Files under a folder of the repository, node_modules left out. */
function filesUnder(folder) {
  const full = join(ROOT, folder);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.parentPath.includes('node_modules'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The digest of every input file's path and bytes. */
export function sourcesDigest() {
  const hash = createHash('sha256');
  const files = INPUTS.flatMap((p) => (statSync(join(ROOT, p), { throwIfNoEntry: false })?.isDirectory() ? filesUnder(p) : existsSync(join(ROOT, p)) ? [p] : [])).sort();
  for (const f of files) hash.update(f).update('\0').update(readFileSync(join(ROOT, f))).update('\0');
  return hash.digest('hex');
}

/** Whether dist/ was built from the sources as they are now. */
export function isBuildFresh() {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === sourcesDigest();
}

/** Builds when dist/ is stale; returns whether it built. Throws when the build fails. */
export function ensureBuilt() {
  const digest = sourcesDigest();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) return false;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status ?? build.signal})`);
  writeFileSync(STAMP, digest);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    ensureBuilt();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}

/** vitest's globalSetup: worker threads and spawned platforms run dist/, so a test run never runs stale code. */
export function setup() {
  ensureBuilt();
}
