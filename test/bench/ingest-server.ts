/**
 * The ingest benchmark's reference server as a process of its own, so the load client
 * does not share its event loop: `node ingest-server.js [LOG_FILE]` (with a file: the
 * durable reference, appending there). Prints one JSON line with the bound ports when
 * ready. (The gateway and the platform it is compared with are started as users start
 * them: dist/main.js.)
 */
import { startReferenceServer } from './reference-server.js';

void startReferenceServer(process.argv[2]).then((ports) => process.stdout.write(JSON.stringify({ ports }) + '\n'));
