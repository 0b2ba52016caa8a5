/**
 * `views.publish` of the local Slack server: each user's Home tab, validated as Slack validates it —
 * `user_id` present, the view JSON a `home` view of at most 100 blocks, each a block object with a
 * type, `private_metadata` at most 3,000 characters — and answered as Slack answers (`invalid_arguments`
 * with Slack's pointer messages). The preview shows the published view (local/preview/home.ts).
 */
import { isRecord, parseJsonOrUndefined } from '../../shared/util';
import { viewProblems } from './block-checks';
import { fail, ok, type SlackAnswer } from './protocol';

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
