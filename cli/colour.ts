/** Colour for a terminal: only on a TTY, never when NO_COLOR is set (https://no-color.org). */
import pc from 'picocolors';
import type { CliIo } from './io';

export type Colours = Pick<typeof pc, 'red' | 'yellow' | 'green' | 'dim' | 'bold'>;

export function colours(io: CliIo): Colours {
  const env = io.env ?? process.env;
  const noColor = env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '';
  return pc.createColors(io.stderr.isTTY === true && !noColor);
}
