/**
 * The runbook in docs/DEPLOY.md as data: each `### Step N — <title>` heading and the shell commands of
 * the ```sh blocks under it, so the rehearsal runs exactly what an operator copies.
 *
 * A step ends at the next heading of level 1–3. Commands: `\` continuations joined, comments (whole
 * lines and trailing ` # …` outside quotes) dropped, blank lines skipped. A heading that starts like
 * a step but is not one, steps out of order and an unclosed fence are errors, so a typo never drops
 * a step silently.
 */

export interface RunbookStep {
  step: number;
  title: string;
  commands: string[];
}

export class RunbookError extends Error {
  override readonly name = 'RunbookError';
}

const STEP_HEADING = /^### Step (\d+) — (\S.*)$/;
const LOOKS_LIKE_STEP = /^#{1,6}\s*Step\b/i;
const SECTION_HEADING = /^#{1,3}\s/;
const FENCE = /^(`{3,}|~{3,})\s*(.*)$/;

export function runbookSteps(markdown: string): RunbookStep[] {
  const steps: RunbookStep[] = [];
  const lines = markdown.split(/\r?\n/);
  let current: RunbookStep | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const end = closingFence(lines, i, fence[1] ?? '```');
      if (current !== undefined && (fence[2] ?? '').split(/\s+/)[0] === 'sh')
        current.commands.push(...shellCommands(lines.slice(i + 1, end)));
      i = end;
      continue;
    }
    const heading = STEP_HEADING.exec(line);
    if (heading !== null) {
      current = { step: Number(heading[1]), title: (heading[2] ?? '').trim(), commands: [] };
      const expected = steps.length + 1;
      if (current.step !== expected) throw new RunbookError(`line ${i + 1}: "Step ${current.step}" where step ${expected} was expected`);
      steps.push(current);
    } else if (LOOKS_LIKE_STEP.test(line)) {
      throw new RunbookError(`line ${i + 1}: "${line}" is not a step heading; write "### Step N — <title>"`);
    } else if (SECTION_HEADING.test(line)) {
      current = undefined;
    }
  }
  return steps;
}

/** The index of the line closing the fence opened at `start` (same character, at least as long). */
function closingFence(lines: readonly string[], start: number, opener: string): number {
  for (let j = start + 1; j < lines.length; j++) {
    const text = (lines[j] ?? '').trim();
    if (text.startsWith(opener[0]!.repeat(opener.length)) && /^(`+|~+)$/.test(text)) return j;
  }
  throw new RunbookError(`line ${start + 1}: the code block opened here is never closed`);
}

/** The commands of a shell block: continuations joined, comments and blank lines dropped. */
export function shellCommands(blockLines: readonly string[]): string[] {
  // A line ending in a (not escaped) backslash goes on with the next: the next's indentation is layout, not part of the command.
  const text = [...blockLines, '']
    .map(stripShellComment)
    .reduce((joined, line) =>
      /(^|[^\\])(\\\\)*\\$/.test(joined) ? `${joined.slice(0, -1).trimEnd()} ${line.trimStart()}` : `${joined}\n${line}`,
    );
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** The line without its comment: a `#` at the start of a word, outside quotes. */
export function stripShellComment(line: string): string {
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\\' && quote !== "'") {
      i++; // an escaped character, outside quotes or in double quotes
    } else if (ch === quote) {
      quote = undefined;
    } else if (quote === undefined && (ch === '"' || ch === "'")) {
      quote = ch;
    } else if (quote === undefined && ch === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return line.slice(0, i).trimEnd();
    }
  }
  return line.trimEnd();
}
