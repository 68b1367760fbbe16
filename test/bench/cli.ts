/** npm run bench -- ingest [--devices N] [--duration S] [--points-per-frame K] | decode */
import { parseArgs } from 'node:util';
import { runDecodeBench } from './decode.js';
import { runIngestBench } from './ingest.js';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      devices: { type: 'string', default: '1000' },
      duration: { type: 'string', default: '10' },
      'points-per-frame': { type: 'string', default: '1' },
    },
  });
  const which = positionals.length > 0 ? positionals : ['decode', 'ingest'];
  for (const name of which) {
    if (name === 'decode') runDecodeBench();
    else if (name === 'ingest') await runIngestBench(Number(values.devices), Number(values.duration), Number(values['points-per-frame']));
    else throw new Error(`unknown benchmark ${name}; try ingest or decode`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
