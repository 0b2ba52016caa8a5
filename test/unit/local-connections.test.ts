/**
 * `npm start -- --connections N`'s clients as planned (readable ids, teams and channels, one letter
 * each), and as the CLI reads them back from the ready file for `--connection <id>`.
 */
import { describe, expect, it } from 'vitest';
import { parseReadyFile, readyConnection } from '../../cli/ready-file';
import { CliError } from '../../cli/errors';
import { MAX_CONNECTIONS, planConnections } from '../../local/stack/connections';
import { LocalStackError } from '../../local/stack';

const CLIENT_A = {
  id: 'client-a',
  webhookUrl: 'http://127.0.0.1:8787/webhook/client-a',
  secrets: ['whsec_a'],
  simulatorUrl: 'http://127.0.0.1:9001',
  apiKey: 'sim_client_a_key',
  projectIds: ['p1', 'p2'],
  slackTeamId: 'T0CLIENTA',
  slackTeamName: 'Client A',
  slackChannel: 'C0CLIENTA',
};

describe('the clients of npm start -- --connections N', () => {
  it('are client-a, client-b… each with its team, channel and a seed of its own', () => {
    const plans = planConnections(2);
    expect(plans.map((p) => [p.id, p.teamId, p.teamName, p.channel, p.channelName])).toEqual([
      ['client-a', 'T0CLIENTA', 'Client A', 'C0CLIENTA', 'client-a-digests'],
      ['client-b', 'T0CLIENTB', 'Client B', 'C0CLIENTB', 'client-b-digests'],
    ]);
    expect(new Set(plans.map((p) => p.seed)).size).toBe(2);
    expect(planConnections(0)).toEqual([]);
    expect(planConnections(MAX_CONNECTIONS).at(-1)?.id).toBe('client-z');
    expect(() => planConnections(MAX_CONNECTIONS + 1)).toThrow(LocalStackError);
  });

  it('are read back from the ready file, a client missing a field left out', () => {
    const { apiKey: _missing, ...broken } = { ...CLIENT_A, id: 'client-b' };
    const ready = parseReadyFile({ connections: [CLIENT_A, broken, 'nonsense'] }, 'ready.json');
    expect(ready.connections).toEqual([CLIENT_A]);
    expect(readyConnection(ready, 'client-a')).toEqual(CLIENT_A);
    expect(parseReadyFile({}, 'old.json').connections).toEqual([]);
  });

  it('a --connection the ready file does not list is refused, naming those it lists', () => {
    const ready = parseReadyFile({ connections: [CLIENT_A] }, 'ready.json');
    expect(() => readyConnection(ready, 'client-q')).toThrow(CliError);
    expect(() => readyConnection(ready, 'client-q')).toThrow(/no connection "client-q"/);
    try {
      readyConnection(ready, 'client-q');
    } catch (error) {
      expect((error as CliError).fix).toBe('use one of client-a');
    }
  });
});
