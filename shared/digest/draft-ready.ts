/** The notice of a `draft.ready` event, in the thread of the project's latest digest in each channel. */
import { DIGEST_METRICS } from '../contracts';
import type { DraftReadyData, WebhookEvent } from '../events';
import { eachAlone, type KindHandler, type RecordResult } from '../queue-work';
import { claimFor, finishUnrouted, projectOrId, underClaim } from './claim';
import type { DigestDeps } from './deps';
import { channelsFor, postToChannels, type ChannelTarget } from './fan-out';
import { renderDraftReady } from './render';

export const noticeDrafts: KindHandler<{ event: WebhookEvent; data: DraftReadyData }, DigestDeps> = eachAlone(({ event, data }, deps) =>
  noticeDraft(event, data, deps),
);

async function noticeDraft(event: WebhookEvent, draft: DraftReadyData, deps: DigestDeps): Promise<RecordResult> {
  const claim = await claimFor(event, deps);
  if (!claim) return 'duplicate';
  return underClaim<RecordResult>(event, claim.token, deps, async () => {
    const { dashboardUrlTemplate, mode } = deps.options;
    const targets = await channelsFor(draft.project_id, mode, deps);
    if (targets.length === 0) return finishUnrouted(event, claim, deps);
    const [project, snapshot] = await Promise.all([projectOrId(draft.project_id, event, deps), deps.store.getSnapshot(draft.project_id)]);
    const message = renderDraftReady({
      project,
      projectId: draft.project_id,
      assetId: draft.asset_id,
      version: draft.version,
      createdAt: event.created_at,
      dashboardUrlTemplate,
    });
    const metadata = {
      event_type: 'visibility_draft_ready',
      event_payload: { event_id: event.id, project_id: draft.project_id, asset_id: draft.asset_id },
    };
    // Into the thread of the project's latest digest in each channel, when there is one.
    const messageFor = (target: ChannelTarget) => ({ main: message, thread: [], threadTs: snapshot?.digestThreads?.[target.channel] });
    await postToChannels(event, claim, targets, messageFor, metadata, deps);
    await deps.store.finish(event.id, claim.token, 'posted');
    deps.log.info('draft notice posted', {
      eventId: event.id,
      projectId: draft.project_id,
      assetId: draft.asset_id,
      channels: targets.map((t) => t.channel),
    });
    deps.metrics.count(DIGEST_METRICS.draftNoticePosted);
    return 'posted';
  });
}
