/**
 * `views.publish` of the local Slack server: each user's Home tab, validated as Slack validates it —
 * `user_id` present, the view JSON a `home` view of at most 100 blocks, each a block object with a
 * type, `private_metadata` at most 3,000 characters — and answered as Slack answers (`invalid_arguments`
 * with Slack's pointer messages). The preview shows the published view (local/preview/home.ts).
 */
import { HOME_VIEW_MAX_BLOCKS } from '../../shared/slack-app/home/view';
import { isRecord, parseJsonOrUndefined } from '../../shared/util';
import { fail, ok, type SlackAnswer } from './protocol';

/** Slack's limits of a Home view. */
const HOME_VIEW_LIMITS = { blocks: HOME_VIEW_MAX_BLOCKS, privateMetadata: 3000 } as const;

export interface PublishedHome {
  userId: string;
  view: { type: 'home'; blocks: unknown[]; private_metadata?: string | undefined };
  /** Publishes of this user's tab so far (a re-publish replaces the view). */
  version: number;
}

export class HomeTabs {
  private readonly views = new Map<string, PublishedHome>();

  constructor(private readonly changed: () => void) {}

  publish(args: Record<string, unknown>): SlackAnswer {
    const userId = typeof args['user_id'] === 'string' ? args['user_id'] : '';
    if (userId === '') return invalid('[ERROR] missing required field: user_id');
    const view = typeof args['view'] === 'string' ? parseJsonOrUndefined(args['view']) : args['view'];
    const problems = viewProblems(view);
    if (problems.length > 0 || !isRecord(view)) return invalid(...problems);
    const blocks = view['blocks'] as unknown[];
    const metadata = typeof view['private_metadata'] === 'string' ? view['private_metadata'] : undefined;
    const published: PublishedHome = {
      userId,
      view: { type: 'home', blocks, ...(metadata === undefined ? {} : { private_metadata: metadata }) },
      version: (this.views.get(userId)?.version ?? 0) + 1,
    };
    this.views.set(userId, published);
    this.changed();
    return ok({ view: { id: `V${userId}`, team_id: 'T', type: 'home', blocks } });
  }

  /** The user's published Home tab (a copy); undefined before the app published one. */
  of(userId: string): PublishedHome | undefined {
    const published = this.views.get(userId);
    return published === undefined ? undefined : { ...published, view: { ...published.view } };
  }

  clear(): void {
    this.views.clear();
  }
}

function invalid(...messages: string[]): SlackAnswer {
  return fail('invalid_arguments', { response_metadata: { messages } });
}

/** What Slack would refuse in a Home view (`views.publish`), as its `response_metadata.messages`. */
function viewProblems(view: unknown): string[] {
  if (!isRecord(view)) return ['[ERROR] failed to match all allowed schemas [json-pointer:/view]'];
  const problems: string[] = [];
  if (view['type'] !== 'home') problems.push('[ERROR] must be "home" for views.publish [json-pointer:/view/type]');
  const blocks = view['blocks'];
  if (!Array.isArray(blocks)) problems.push('[ERROR] missing required field: blocks [json-pointer:/view]');
  else {
    if (blocks.length > HOME_VIEW_LIMITS.blocks)
      problems.push(`[ERROR] no more than ${HOME_VIEW_LIMITS.blocks} items allowed [json-pointer:/view/blocks]`);
    blocks.forEach((block, i) => {
      if (!isRecord(block) || typeof block['type'] !== 'string')
        problems.push(`[ERROR] missing required field: type [json-pointer:/view/blocks/${i}]`);
    });
  }
  const metadata = view['private_metadata'];
  if (typeof metadata === 'string' && metadata.length > HOME_VIEW_LIMITS.privateMetadata)
    problems.push(`[ERROR] must be less than ${HOME_VIEW_LIMITS.privateMetadata} characters [json-pointer:/view/private_metadata]`);
  return problems;
}
