/**
 * Every `npx bridge …` command shown in the docs, with where it is: in code blocks (any line, comments
 * included: `# eval "$(npx bridge completion bash)"` is a command too) and in inline code spans.
 * A command ends where the shell would end it: `)`, `;`, `&&`, `||`, a pipe, a redirection or a
 * comment. Shell words are split as the shell splits them (quotes, backslashes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocCommand {
  /** Path relative to the repository root. */
  file: string;
  line: number;
  /** What follows `npx bridge`, as written (placeholders included). */
  text: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const INLINE_CODE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
const PREFIX = 'npx bridge';

/** README.md and docs/*.md of the repository at `root`. */
export function docFiles(root: string): { file: string; text: string }[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...docs].map((path) => ({ file: relative(root, path), text: readFileSync(path, 'utf8') }));
}

export function docCommands(files: readonly { file: string; text: string }[]): DocCommand[] {
  const found: DocCommand[] = [];
  for (const { file, text } of files) {
    const add = (line: number, snippet: string) => {
      for (const command of commandsIn(snippet)) found.push({ file, line, text: command });
    };
    // Inline code may wrap across the lines of a paragraph: spans are found per paragraph.
    let paragraph: { start: number; lines: string[] } | undefined;
    const flush = () => {
      if (paragraph === undefined) return;
      const joined = paragraph.lines.join('\n');
      for (const match of joined.matchAll(INLINE_CODE)) {
        const line = paragraph.start + (joined.slice(0, match.index).match(/\n/g)?.length ?? 0);
        add(line, (match[2] ?? '').replace(/\n/g, ' '));
      }
      paragraph = undefined;
    };
    let fence: string | undefined;
    text.split(/\r?\n/).forEach((line, index) => {
      const marker = FENCE.exec(line)?.[1];
      if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
        flush();
        fence = fence === undefined ? marker : undefined;
      } else if (fence !== undefined) {
        add(index + 1, line);
      } else if (line.trim() === '') {
        flush();
      } else {
        paragraph ??= { start: index + 1, lines: [] };
        paragraph.lines.push(line);
      }
    });
    flush();
  }
  return found;
}

/** The text after each `npx bridge` in a snippet, cut where the shell ends the command. */
function commandsIn(snippet: string): string[] {
  const commands: string[] = [];
  let from = snippet.indexOf(PREFIX);
  while (from !== -1) {
    const rest = snippet.slice(from + PREFIX.length);
    if (rest === '' || /^\s/.test(rest)) commands.push(cutAtShellEnd(rest).trim());
    from = snippet.indexOf(PREFIX, from + PREFIX.length);
  }
  return commands;
}

function cutAtShellEnd(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    const atWordStart = i === 0 || /\s/.test(text[i - 1] ?? '');
    if (ch === '\\' && quote !== "'") i++;
    else if (quote !== undefined) quote = ch === quote ? undefined : quote;
    else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === ')' || ch === ';' || text.startsWith('&&', i) || text.startsWith('||', i)) return text.slice(0, i);
    else if (atWordStart && (ch === '#' || ch === '|' || ch === '>' || text.startsWith('2>', i))) return text.slice(0, i);
  }
  return text;
}

/** Shell words: whitespace-separated, with '…' and "…" quoting and backslash escapes. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
    } else if (ch === '\\' && (quote === undefined || /["\\$`]/.test(text[i + 1] ?? ''))) {
      word = (word ?? '') + (text[++i] ?? '');
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word ??= '';
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (quote !== undefined) throw new Error(`unclosed ${quote} in: ${text}`);
  if (word !== undefined) words.push(word);
  return words;
}
