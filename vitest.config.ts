import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // CDK synth tests are CPU-heavy; two cores on CI.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Pure code and synth assertions share one module graph per worker: each file re-importing the
        // domain, the CDK and the SDK cost more than half of their time (unit + infra 110 s → 58 s).
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/infra/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        // Against real peers each file keeps its own modules: handlers read their environment at load,
        // and a test sets that environment for the handler it imports.
        test: { name: 'peers', include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'] },
      },
    ],
  },
});
