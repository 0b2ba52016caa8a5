// `bridge doctor` on the local stack checks what the stack uses now: the secrets as its functions read
// them (its Secrets Manager server, by the ids in the ready file), not the copies the ready file keeps
// from the start. A changed read-API key fails its check with the fix; added signing secrets count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliStack, type CliStack } from './helpers';

let cli: CliStack;

beforeAll(async () => {
  cli = await startCliStack('doctor-local', { secretsManagerPort: 0 });
}, 90_000);

afterAll(() => cli?.close());

describe('doctor on the local stack reads the live secrets', { timeout: 120_000 }, () => {
  it('counts the signing secrets the ingest function reads, not the ready file copy', async () => {
    const before = await cli.bridge(['doctor']);
    expect(before.out).toContain('✓ signing secrets: 1 secret(s) set (local Secrets Manager)');
    expect(before.out).toContain('✓ read-API key: set (local Secrets Manager)');
    expect((await cli.bridge(['secrets', 'signing', 'add', '--value-stdin'], 'whsec_second\n')).code).toBe(0);
    const after = await cli.bridge(['doctor']);
    expect(after.out).toContain('✓ signing secrets: 2 secret(s) set (local Secrets Manager)');
  });

  it('a read-API key the service rejects fails its check, with the fix', async () => {
    const set = await cli.bridge(['secrets', 'set', 'read-api-key', '--value-stdin'], 'bad_key\n');
    expect(set.code).toBe(0);
    // The local stack's own cache time, not the deployed default.
    expect(set.out).toContain('picks it up within 2 s (the local stack re-reads its secrets every 2 s)');
    try {
      const doctor = await cli.bridge(['doctor']);
      expect(doctor.code).toBe(1);
      expect(doctor.out).toMatch(/✗ read-API key works: the key is rejected \(HTTP 401/);
      expect(doctor.out).toContain('fix: create a read key on the service');
      expect(doctor.out).toContain('npx bridge secrets set read-api-key --value-stdin');
    } finally {
      await cli.bridge(['secrets', 'set', 'read-api-key', '--value-stdin'], `${cli.stack.apiKey}\n`);
    }
    expect((await cli.bridge(['doctor'])).out).toContain('✓ read-API key works');
  });
});
