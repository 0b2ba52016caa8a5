/**
 * What Slack refuses in the blocks of a message, as the local Slack server checks it: a
 * light version of Block Kit's validation with Slack's pointer messages — the bounds of
 * shared/slack-text.ts's SLACK_LIMITS a bridge bug is likely to hit, and every limit of the chart and
 * table blocks (shared/slack-blocks/check.ts).
 */
import { nativeBlockProblems } from '../../shared/slack-blocks/check';
import { SLACK_LIMITS } from '../../shared/slack-text';
import { asArray, isRecord, parseJsonOrUndefined } from '../../shared/util';
import { invalidBlocks, type SlackAnswer } from './protocol';

/** The blocks a call carries: its `blocks`, or its view's (`views.publish`); none when it has neither. */
export function blocksOfCall(args: Record<string, unknown>): readonly unknown[] {
  if (Array.isArray(args.blocks)) return args.blocks as unknown[];
  const view = typeof args.view === 'string' ? parseJsonOrUndefined(args.view) : args.view;
  return isRecord(view) ? asArray(view.blocks) : [];
}

/** Slack's `invalid_blocks` answer for blocks that break its limits; undefined for valid or absent blocks. */
export function blocksError(blocks: unknown): SlackAnswer | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks)) return invalidBlocks(['blocks must be an array [json-pointer:/blocks]']);
  const problems = nativeBlockProblems(blocks);
  if (blocks.length > SLACK_LIMITS.blocksPerMessage)
    problems.push(`no more than ${SLACK_LIMITS.blocksPerMessage} items allowed [json-pointer:/blocks]`);
  problems.push(...blocks.flatMap(blockProblems));
  return problems.length > 0 ? invalidBlocks(problems) : undefined;
}

function blockProblems(block: unknown, i: number): string[] {
  const at = (path = ''): string => `[json-pointer:/blocks/${i}${path}]`;
  if (!isRecord(block) || typeof block.type !== 'string') return [`missing required field: type ${at()}`];
  const problems: string[] = [];
  const bounded = (value: unknown, max: number, path: string): void => {
    const length = typeof value === 'string' ? value.length : 0;
    if (length === 0) problems.push(`must be more than 0 characters ${at(path)}`);
    else if (length > max) problems.push(`must be less than ${max + 1} characters ${at(path)}`);
  };
  const counted = (items: readonly unknown[], max: number, path: string): void => {
    if (items.length > max) problems.push(`no more than ${max} items allowed ${at(path)}`);
  };
  const text = isRecord(block.text) ? block.text : undefined;
  if (block.type === 'header') {
    bounded(text?.text, SLACK_LIMITS.headerText, '/text/text');
    if (text && text.type !== 'plain_text') problems.push(`must be plain_text ${at('/text/type')}`);
  } else if (block.type === 'section') {
    const fields = Array.isArray(block.fields) ? (block.fields as unknown[]) : undefined;
    if (typeof text?.text !== 'string' && !fields) problems.push(`must provide text or fields ${at()}`);
    if (typeof text?.text === 'string') bounded(text.text, SLACK_LIMITS.sectionText, '/text/text');
    counted(fields ?? [], SLACK_LIMITS.sectionFields, '/fields');
    fields?.forEach((field, j) => bounded(isRecord(field) ? field.text : '', SLACK_LIMITS.sectionFieldText, `/fields/${j}/text`));
  } else if (block.type === 'context') {
    const elements = asArray(block.elements);
    if (elements.length === 0) problems.push(`must provide elements ${at('/elements')}`);
    counted(elements, SLACK_LIMITS.contextElements, '/elements');
  }
  return problems;
}
