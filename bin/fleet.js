#!/usr/bin/env node
// The `fleet` command: runs the compiled composition root (npm install builds it).
process.env.FLEET_CLI = '1';
await import('../dist/main.js');
