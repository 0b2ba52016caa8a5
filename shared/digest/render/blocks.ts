/** Block Kit building blocks and the packing of long lists into blocks within Slack's limits. */
import type { ActionsBlock, Button, ContextBlock, KnownBlock, MrkdwnElement, SectionBlock } from '@slack/web-api';
import type { SlackMessage } from '../../ports';
import type { DataVisualizationBlock } from '../../slack-blocks/types';
import { SLACK_LIMITS, truncateText } from '../../slack-text';

/**
 * The poster's `SlackMessage` (fallback text plus blocks) with its blocks typed as Block Kit blocks,
 * so callers and tests can inspect them. Assignable to `SlackMessage`.
 */
export interface BlockKitMessage extends SlackMessage {
  blocks: KnownBlock[];
  fallbackBlocks?: KnownBlock[] | undefined;
}

/** A block of a digest message: Block Kit's known blocks and Slack's chart (not yet in @slack/types). */
export type DigestBlock = KnownBlock | DataVisualizationBlock;

/** A digest message, which may hold native chart and table blocks. */
export interface DigestMessage extends SlackMessage {
  blocks: DigestBlock[];
  /** The same message with the words of its native blocks in their place: sent if Slack refuses them. */
  fallbackBlocks?: KnownBlock[] | undefined;
}

/** Block text per message, kept below `SLACK_LIMITS.messageTotalText` for headroom. */
export const MESSAGE_TEXT_BUDGET = 9_000;

export function mrkdwn(text: string): MrkdwnElement {
  return { type: 'mrkdwn', text, verbatim: true };
}

export function section(text: string): SectionBlock {
  return { type: 'section', text: mrkdwn(truncateText(text, SLACK_LIMITS.sectionText)) };
}

export function context(text: string): ContextBlock {
  return { type: 'context', elements: [mrkdwn(truncateText(text, SLACK_LIMITS.textObject))] };
}

/** One link button in an actions block. `text` is plain text (not escaped). */
export function linkButton(text: string, url: string, actionId: string): ActionsBlock {
  return {
    type: 'actions',
    elements: [
      { type: 'button', text: { type: 'plain_text', text: truncateText(text, SLACK_LIMITS.buttonText) }, url, action_id: actionId },
    ],
  };
}

/** A button that sends `value` to /slack/interactions. `text` is plain text (not escaped). */
export function actionButton(text: string, actionId: string, value: string): Button {
  return { type: 'button', text: { type: 'plain_text', text: truncateText(text, SLACK_LIMITS.buttonText) }, action_id: actionId, value };
}

export interface ListOptions {
  maxBlocks: number;
  maxChars: number;
}

/**
 * Lines packed into as few section blocks as possible (each ≤ the section text limit), at most
 * `maxBlocks` blocks and `maxChars` characters. Returns the blocks and how many lines fit; the caller
 * sends the rest elsewhere (nothing is dropped silently).
 */
export function packLines(lines: readonly string[], options: ListOptions): { blocks: SectionBlock[]; included: number } {
  const chunks: string[] = [];
  let total = 0;
  let included = 0;
  for (const raw of lines) {
    const line = truncateText(raw, SLACK_LIMITS.sectionText);
    const last = chunks.at(-1);
    const appended = last === undefined ? null : `${last}\n${line}`;
    if (appended !== null && appended.length <= SLACK_LIMITS.sectionText && total + line.length + 1 <= options.maxChars) {
      chunks[chunks.length - 1] = appended;
      total += line.length + 1;
    } else if (chunks.length < options.maxBlocks && total + line.length <= options.maxChars) {
      chunks.push(line);
      total += line.length;
    } else break;
    included += 1;
  }
  return { blocks: chunks.map(section), included };
}
