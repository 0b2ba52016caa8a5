// `npx bridge tail` on the local stack: the events of its stream (local/events-server.ts, the one
// `npm start` serves), and when that stack stops, a line saying so and a wait until `npm start` runs
// again (its ready file back), then the new stack's events, until Ctrl-C.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';
import { EventsServer } from '../../local/events-server';
import { LocalObservabilityHub } from '../../local/local-observability';
import { sleep } from '../../shared/util';

const dir = mkdtempSync(join(tmpdir(), 'bridge-tail-'));
const readyFile = join(dir, 'ready.json');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A local stack as far as tail sees it: an event stream, and the ready file naming it. */
async function stackUp(): Promise<{ hub: LocalObservabilityHub; events: EventsServer }> {
  const hub = new LocalObservabilityHub({ level: 'silent' });
  const events = await EventsServer.start(hub, { host: '127.0.0.1', port: 0 });
  writeFileSync(readyFile, JSON.stringify({ webhookUrl: 'http://127.0.0.1:9/webhook', eventsUrl: events.eventsUrl, pid: process.pid }));
  return { hub, events };
}

async function until(what: string, io: BufferedIo, text: string, stream: 'stdout' | 'stderr'): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (io[stream].text().includes(text)) return;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}: ${stream} is ${JSON.stringify(io[stream].text())}`);
}

describe('tail on the local stack', { timeout: 90_000 }, () => {
  it('says when the stack stops, waits for it to come back, and resumes', async () => {
    const first = await stackUp();
    let interrupt: (() => void) | undefined;
    const io = bufferIo({
      env: { NO_COLOR: '1' },
      defaultReadyFile: readyFile,
      pollIntervalMs: 50,
      onInterrupt: (handler) => {
        interrupt = handler;
        return () => undefined;
      },
    });
    const tail = run(['tail'], io);
    await until('the stream', io, 'tailing the local stack', 'stderr');
    first.hub.log('digest', 'info', 'digest posted', { channel: 'C0FIRST' });
    await until('the first event', io, 'channel=C0FIRST', 'stdout');

    // `npm start` stops: its stream closes and its ready file goes.
    rmSync(readyFile);
    await first.events.close();
    await until('the stop', io, 'the local stack stopped', 'stderr');

    const second = await stackUp();
    try {
      await until('the restart', io, `the local stack is back; tailing ${second.events.eventsUrl}`, 'stderr');
      second.hub.log('ingest', 'info', 'delivery accepted', { deliveryId: 'd-second' });
      await until('the second event', io, 'deliveryId=d-second', 'stdout');
      interrupt?.();
      expect(await tail).toBe(0);
      expect(io.stderr.text()).toContain('stopped\n');
      expect(io.stderr.text()).not.toContain('UND_ERR_SOCKET');
    } finally {
      await second.events.close();
    }
  });
});
