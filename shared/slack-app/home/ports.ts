/**
 * The App Home portfolio's vocabulary: what a publish request carries through the commands queue and
 * the port that publishes a user's Home tab (`views.publish`). A leaf: the endpoint, the worker's kind
 * and the renderer import these types, never the other way round.
 */
import type { QUEUE_MESSAGE_KINDS } from '../../contracts';
import type { Tenant } from '../../tenancy';

/** A "Subscribe a channel" pick on the Home tab: the project (by id, as the view names it) and the channel picked. */
export interface HomeSubscribe {
  projectId: string;
  channel: string;
}

/** Queue message body: publish `userId`'s Home tab at `page` (0-based), after subscribing a channel when asked. */
export interface HomeRequest {
  kind: typeof QUEUE_MESSAGE_KINDS.slackHome;
  userId: string;
  page: number;
  subscribe?: HomeSubscribe | undefined;
  receivedAtMs: number;
  /** The tenants the user's workspace reaches (../tenant-scope.ts), decided by the Slack function; none = not scoped (the stack's alone). */
  tenants?: readonly Tenant[] | undefined;
}

/** A Home tab view (`type: home`), as `views.publish` takes it. */
export interface HomeView {
  type: 'home';
  blocks: unknown[];
  /** The page shown, so a page button re-publishes its neighbour and a subscribe keeps the page. */
  private_metadata: string;
}

/** Publishes a user's Home tab. Throws the domain's errors when Slack does not take it. */
export interface HomeViews {
  publish(userId: string, view: HomeView): Promise<void>;
}
