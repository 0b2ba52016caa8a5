/**
 * Dashboard links from a URL template, e.g.
 * `https://app.example.com/projects/{project_id}/runs/{run_id}?prompt={prompt_id}`.
 * Placeholders: {project_id}, {run_id}, {prompt_id}, {asset_id}; values are URL-encoded. https only.
 * A link that needs a placeholder the context lacks is not made (null), so nothing points somewhere wrong.
 */
export const URL_PLACEHOLDERS = ['project_id', 'run_id', 'prompt_id', 'asset_id'] as const;
export type UrlPlaceholder = (typeof URL_PLACEHOLDERS)[number];
export type UrlValues = Partial<Record<UrlPlaceholder, string>>;

const MAX_TEMPLATE = 1000;
/** Longest link made: a longer one (very long encoded ids) could be cut with its text, breaking the `<…|…>`. */
export const MAX_LINK_URL = 1000;

/** The problem with a dashboard URL template, or null when it is usable. Config code calls this at start-up. */
export function dashboardUrlTemplateProblem(template: string): string | null {
  if (template.length > MAX_TEMPLATE) return `the dashboard URL template is longer than ${MAX_TEMPLATE} characters`;
  if (!template.startsWith('https://')) return 'the dashboard URL template must start with https://';
  if (/[\s<>|"]/.test(template)) return 'the dashboard URL template must not contain spaces or the characters < > | "';
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    if (!(URL_PLACEHOLDERS as readonly string[]).includes(match[1] ?? '')) {
      return `unknown placeholder {${match[1] ?? ''}} in the dashboard URL template; use ${URL_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`;
    }
  }
  if (/[{}]/.test(template.replace(/\{[a-z_]+\}/g, ''))) return 'unbalanced { or } in the dashboard URL template';
  try {
    const url = new URL(template.replace(/\{[a-z_]+\}/g, 'x'));
    if (url.protocol !== 'https:' || url.hostname.length === 0) return 'the dashboard URL template must be an https URL with a host';
  } catch {
    return 'the dashboard URL template is not a valid URL';
  }
  return null;
}

/** Throws an Error saying what to fix when the template is not usable (see `dashboardUrlTemplateProblem`). */
export function assertDashboardUrlTemplate(template: string): void {
  const problem = dashboardUrlTemplateProblem(template);
  if (problem !== null) throw new Error(problem);
}

/**
 * The template filled in, or null when there is no (valid) template. A placeholder without a value cuts
 * the URL before its path segment or query parameter (a project link from a template that also names
 * {prompt_id} opens the project's page); null when that would leave only the host, or when the link would
 * be longer than `MAX_LINK_URL`.
 */
export function fillUrlTemplate(template: string | undefined, values: UrlValues): string | null {
  if (template === undefined || dashboardUrlTemplateProblem(template) !== null) return null;
  const usable = cutAtFirstMissing(template, values);
  if (usable !== template && isBareHost(usable)) return null;
  const url = usable.replace(PLACEHOLDER, (_, name: UrlPlaceholder) => encodeValue(values[name] ?? ''));
  return url.length <= MAX_LINK_URL ? url : null;
}

const PLACEHOLDER = /\{([a-z_]+)\}/g;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** URL-encoded; a lone surrogate (which `encodeURIComponent` throws on) becomes U+FFFD. */
function encodeValue(value: string): string {
  return encodeURIComponent(value.replace(LONE_SURROGATE, '\ufffd'));
}

/** The template up to the path segment or query parameter of its first placeholder without a value. */
function cutAtFirstMissing(template: string, values: UrlValues): string {
  for (const match of template.matchAll(PLACEHOLDER)) {
    const value = values[match[1] as UrlPlaceholder];
    if (value !== undefined && value.length > 0) continue;
    const before = template.slice(0, match.index);
    return before.slice(0, Math.max(before.lastIndexOf('/'), before.lastIndexOf('?'), before.lastIndexOf('&')));
  }
  return template;
}

/** True for a URL that is only the host: no path beyond "/", no query. */
function isBareHost(url: string): boolean {
  const parsed = new URL(url.replace(PLACEHOLDER, 'x'));
  return parsed.pathname === '/' && parsed.search === '';
}

/** A mrkdwn link to `url` showing `label` (already escaped text), or just the label without a URL. */
export function mrkdwnLink(url: string | null, label: string): string {
  if (url === null || label.length === 0) return label;
  // Inside <…|…> Slack reads `|` and `>` as syntax: the label never has them (escaped or replaced).
  return `<${url.replace(/&/g, '&amp;')}|${label.replace(/\|/g, '¦')}>`;
}
