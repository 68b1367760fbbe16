import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Builds dist/ first when the sources changed since it was built (bin/build-if-stale.js).
    globalSetup: ['bin/build-if-stale.js'],
  },
});
