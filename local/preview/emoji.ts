/**
 * The `:code:` emoji the preview shows as Slack does: the codes the bridge writes (grep `:[a-z_]+:` in
 * shared/: `:memo:`, `:warning:`) and a few a reply or a test is likely to carry. Not Slack's whole set:
 * a code missing here stays text, which is how Slack shows a code it doesn't know.
 */
export const EMOJI: Readonly<Record<string, string>> = {
  memo: '📝',
  warning: '⚠️',
  white_check_mark: '✅',
  x: '❌',
  bell: '🔔',
  no_bell: '🔕',
  large_green_circle: '🟢',
  large_yellow_circle: '🟡',
  red_circle: '🔴',
  chart_with_upwards_trend: '📈',
  chart_with_downwards_trend: '📉',
  eyes: '👀',
  tada: '🎉',
  '+1': '👍',
  '-1': '👎',
};
