/** The action ids of the bridge's buttons: the digest renders them, the Slack app's interactions read them. */
export const ACTION_IDS = {
  mute7d: 'mute_7d',
  onlyChanges: 'only_changes',
  /** Shown instead of "Mute 7 days" once the channel muted the project, and of "Only changes" in `changes` mode. */
  unmute: 'unmute',
  fullDigests: 'full_digests',
  openDashboard: 'open_dashboard',
  /** On the ephemeral answer of a read (`status`, `projects`, `list`): post it in the channel for everyone. */
  shareInChannel: 'share_in_channel',
} as const;

/** The digest's settings buttons: each changes the channel's settings for the project in its signed value. */
export const SETTINGS_ACTION_IDS = [ACTION_IDS.mute7d, ACTION_IDS.unmute, ACTION_IDS.onlyChanges, ACTION_IDS.fullDigests] as const;
export type SettingsActionId = (typeof SETTINGS_ACTION_IDS)[number];
