// The architecture's import rules, as `npm run lint` enforces them (eslint.config.js): each case lints one
// import from a file placed in a given folder and looks for a no-restricted-imports error.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

const RULES = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports']);

async function restrictedImports(filePath: string, specifier: string, kind: 'value' | 'type' = 'value'): Promise<string[]> {
  const code =
    kind === 'type'
      ? `import type { Thing } from '${specifier}';\nexport type Used = Thing;\n`
      : `import { thing } from '${specifier}';\nexport const used = thing;\n`;
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId !== null && RULES.has(m.ruleId)).map((m) => m.message);
}

describe('import boundaries', () => {
  it.each([
    ['gateway/x.ts', '../api/app.js'],
    ['gateway/protocols/jt808/x.ts', '../../../projections/index.js'],
    ['gateway/x.ts', '../main.js'],
    ['core/x.ts', '../gateway/server.js'],
    ['core/event-store/x.ts', '../../projections/runner.js'],
    ['core/x.ts', '../api/app.js'],
    ['core/x.ts', '../main.js'],
    ['projections/devices/x.ts', '../../gateway/server.js'],
    ['projections/x.ts', '../api/read-models.js'],
    ['api/routes/x.ts', '../../gateway/server.js'],
    ['cli/x.ts', '../gateway/server.js'],
    ['cli/x.ts', '../projections/index.js'],
    ['cli/x.ts', '../main.js'],
    ['core/x.ts', '../cli/index.js'],
    ['api/x.ts', '../cli/index.js'],
    ['webhook-delivery/x.ts', '../projections/webhooks/projector.js'],
    ['webhook-delivery/x.ts', '../projections/webhooks/feed.js'],
    ['webhook-delivery/x.ts', '../api/app.js'],
    ['webhook-delivery/from-config.ts', '../projections/webhooks/projector.js'],
    ['webhook-delivery/from-config.ts', '../api/app.js'],
    ['projections/webhooks/x.ts', '../../webhook-delivery/dispatcher.js'],
    ['core/x.ts', '../webhook-delivery/index.js'],
    ['gateway/x.ts', '../webhook-delivery/index.js'],
    ['api/x.ts', '../webhook-delivery/index.js'],
    ['api/routes/x.ts', '../../webhook-delivery/delivery-log.js'],
  ])('%s may not import %s', async (file, specifier) => {
    const errors = await restrictedImports(file, specifier);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('may not import');
  });

  it.each([
    ['gateway/x.ts', '../core/ids.js'],
    ['gateway/protocols/gt06/x.ts', './frame.js'],
    ['projections/devices/x.ts', '../../core/events.js'],
    ['api/routes/x.ts', '../../projections/index.js'],
    ['api/routes/x.ts', '../../core/events.js'],
    ['core/commands/x.ts', '../events.js'],
    ['main.ts', './gateway/server.js'],
    ['main.ts', './api/app.js'],
    ['main.ts', './cli/index.js'],
    ['cli/x.ts', '../core/commands/customers.js'],
    ['test/gateway/x.ts', '../../gateway/server.js'],
    ['test/x.ts', '../api/app.js'],
    ['webhook-delivery/x.ts', '../core/webhook-queue.js'],
    ['webhook-delivery/from-config.ts', '../projections/webhooks/feed.js'],
    ['main.ts', './webhook-delivery/role.js'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await restrictedImports(file, specifier)).toEqual([]);
  });

  it.each([
    ['api/x.ts', '../webhook-delivery/index.js'],
    ['api/routes/x.ts', '../../webhook-delivery/index.js'],
  ])('%s may import the types of %s', async (file, specifier) => {
    expect(await restrictedImports(file, specifier, 'type')).toEqual([]);
  });

  it('api/ may not import the types of webhook-delivery/ past its index', async () => {
    expect(await restrictedImports('api/x.ts', '../webhook-delivery/delivery-log.js', 'type')).toHaveLength(1);
  });
});
